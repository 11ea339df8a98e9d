import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { getPreset } from '../../../shared/presets'
import type { ConfigDiff, SavedConfig } from '../../../shared/savedConfigs'
import { diffConfigs } from '../../../shared/savedConfigs'
import { sha256File, tmpDir } from '../../../../test/helpers/tmp'
import { App } from '../app'
import type { Dispatch } from '../register'
import { writeDemoDb } from '../../../../test/helpers/demoDb'
import { openTestApp } from '../../../../test/helpers/testApp'

let t: ReturnType<typeof tmpDir>
let app: App
let call: Dispatch
let db: string
let before: string

async function ok<T>(channel: string, input: unknown): Promise<T> {
  const r = await call(channel, input)
  if (!r.ok) throw new Error(`${channel}: ${r.error.code} ${r.error.message}`)
  return r.data as T
}
async function code(channel: string, input: unknown): Promise<string> {
  const r = await call(channel, input)
  return r.ok ? 'ok' : r.error.code
}

beforeAll(() => {
  t = tmpDir()
  db = path.join(t.dir, 'demo.db')
  writeDemoDb(db, { memories: 60 })
  before = sha256File(db)
  ;({ app, call } = openTestApp(db, path.join(t.dir, 'data')))
})
afterAll(() => {
  app.close()
  t.cleanup()
})

describe('diffConfigs', () => {
  it('lists every differing leaf by its dotted path, nothing for equal configs', () => {
    const a = getPreset('fieldguide').config
    expect(diffConfigs(a, structuredClone(a))).toEqual([])
    const b = { ...structuredClone(a), topK: a.topK + 3, weights: { ...a.weights, recency: 0.5 }, scope: { ...a.scope, tiers: ['archived'] } }
    expect(diffConfigs(a, b)).toEqual([
      { path: 'scope.tiers', a: a.scope.tiers, b: ['archived'] },
      { path: 'topK', a: a.topK, b: a.topK + 3 },
      { path: 'weights.recency', a: a.weights.recency, b: 0.5 },
    ])
  })
})

describe('configs channels', () => {
  it('save merges over the preset and stores the whole config; list / get / diff / delete read it back', async () => {
    const neo = getPreset('neo').config
    const saved = await ok<SavedConfig>('configs.save', { name: ' tight neo ', preset: 'neo', config: { topK: 2, floor: 0.4 }, note: 'for the demo' })
    expect(saved.name).toBe('tight neo') // trimmed
    expect(saved.config).toEqual({ ...neo, topK: 2, floor: 0.4 })
    await ok('configs.save', { name: 'plain neo', preset: 'neo' })
    const list = await ok<{ configs: SavedConfig[]; unreadable: string[] }>('configs.list', {})
    expect(list.configs.map((c) => c.name).sort()).toEqual(['plain neo', 'tight neo'])
    expect((await ok<SavedConfig>('configs.get', { name: 'tight neo' })).note).toBe('for the demo')

    const d = await ok<ConfigDiff>('configs.diff', { a: 'plain neo', b: { name: 'tight neo' } })
    expect(d.changes.map((c) => c.path).sort()).toEqual(['floor', 'topK'])
    expect(d.changes.find((c) => c.path === 'topK')).toEqual({ path: 'topK', a: neo.topK, b: 2 })
    const vsCurrent = await ok<ConfigDiff>('configs.diff', { a: 'plain neo', b: { preset: 'neo', config: { weights: { ...neo.weights, salience: 0.9 } } } })
    expect(vsCurrent).toEqual({ a: 'plain neo', b: 'current', changes: [{ path: 'weights.salience', a: neo.weights.salience, b: 0.9 }] })

    expect(await ok('configs.delete', { names: ['plain neo', 'nope'] })).toEqual({ deleted: 1 })
    expect(await code('configs.get', { name: 'plain neo' })).toBe('NOT_FOUND')
    expect(sha256File(db)).toBe(before) // the agent DB is never written
  })

  it('a taken name is a CONFLICT unless replace; replacing keeps the creation time', async () => {
    const first = await ok<SavedConfig>('configs.save', { name: 'dup', config: { topK: 3 } })
    expect(await code('configs.save', { name: 'dup', config: { topK: 4 } })).toBe('CONFLICT')
    expect((await ok<SavedConfig>('configs.get', { name: 'dup' })).config.topK).toBe(3)
    const second = await ok<SavedConfig>('configs.save', { name: 'dup', config: { topK: 4 }, replace: true })
    expect(second.config.topK).toBe(4)
    expect(second.createdAt).toBe(first.createdAt)
  })

  it('bad input is a typed error, never INTERNAL', async () => {
    expect(await code('configs.save', { name: '   ' })).toBe('BAD_INPUT')
    expect(await code('configs.save', { name: 'x'.repeat(121) })).toBe('BAD_INPUT')
    expect(await code('configs.save', { name: 'bad', config: { topK: -1 } })).toBe('BAD_INPUT')
    expect(await code('configs.save', { name: 'bad', preset: 'no-such-preset' })).toBe('BAD_INPUT')
    expect(await code('configs.save', { name: 'bad', config: { nope: 1 } })).toBe('BAD_INPUT')
    expect(await code('configs.diff', { a: 'missing', b: { name: 'dup' } })).toBe('NOT_FOUND')
    expect(await code('configs.delete', { names: [] })).toBe('BAD_INPUT')
  })
})
