/**
 * The preload exposes exactly the contract (one function per channel, each
 * invoking its own channel) plus onJobProgress, and its built bundle is a
 * sandbox-safe CommonJS file that requires nothing but `electron`.
 */
import fs from 'node:fs'
import path from 'node:path'
import vm from 'node:vm'
import { beforeAll, describe, expect, it, vi } from 'vitest'

const fake = await vi.hoisted(async () => (await import('./fakeElectron')).createFakeElectron())
vi.mock('electron', () => fake.module)

import { contract } from '../../src/shared/contract'
import type { JobProgress, RecallscopeApi } from '../../src/shared/api'
import { appRoot } from '../../src/main/paths'

const channels = Object.keys(contract).sort()
const root = appRoot()

describe('preload (source)', () => {
  let api: RecallscopeApi

  beforeAll(async () => {
    fake.reset()
    await import('../../src/preload/index')
    api = fake.exposed.get('recallscope') as RecallscopeApi
  })

  it('exposes one object, window.recallscope', () => {
    expect([...fake.exposed.keys()]).toEqual(['recallscope'])
    expect(api).toBeTypeOf('object')
  })

  it("has exactly the contract's channels plus onJobProgress (any drift fails here)", () => {
    expect(Object.keys(api).sort()).toEqual([...channels, 'onJobProgress'].sort())
    for (const k of Object.keys(api)) expect(typeof (api as unknown as Record<string, unknown>)[k], k).toBe('function')
  })

  it('each function invokes its own channel with the input, and returns what main answers', async () => {
    // Answer every channel with a marker naming it: a function wired to the
    // wrong channel would get another channel's marker back.
    for (const c of channels) fake.handlers.set(c, (_event, input) => ({ ok: true, data: { channel: c, input } }))
    for (const c of channels) {
      fake.ipcRenderer.invokeCalls.length = 0
      const input = { probe: c }
      const r = await (api as unknown as Record<string, (i: unknown) => Promise<unknown>>)[c](input)
      expect(r, c).toEqual({ ok: true, data: { channel: c, input } })
      expect(fake.ipcRenderer.invokeCalls, c).toEqual([{ channel: c, args: [input] }])
    }
    fake.handlers.clear()
  })

  it('onJobProgress delivers the payload only (never the IPC event) and unsubscribes', () => {
    const seen: unknown[] = []
    const off = api.onJobProgress((p) => seen.push(p))
    const p = { jobId: 'j1', kind: 'embed.backfill', label: 'x', state: 'running', done: 1, total: 2, startedAt: 0, updatedAt: 0 } satisfies JobProgress
    fake.ipcRendererEmitter.emit('jobs.progress', { sender: 'ipc-event-object' }, p)
    expect(seen).toEqual([p])
    off()
    fake.ipcRendererEmitter.emit('jobs.progress', { sender: 'ipc-event-object' }, { ...p, done: 2 })
    expect(seen).toHaveLength(1)
    expect(fake.ipcRendererEmitter.listenerCount('jobs.progress')).toBe(0)
  })

  it('imports only types from src/shared (so no validator is bundled into it)', () => {
    const src = fs.readFileSync(path.join(root, 'src', 'preload', 'index.ts'), 'utf8')
    const imports = [...src.matchAll(/^import\s+(type\s+)?[^'"]*from\s+['"]([^'"]+)['"]/gm)].map((m) => ({ typeOnly: !!m[1], from: m[2] }))
    // Besides electron, only shared/jobs.ts (the progress channel's name): a module of types and one string.
    expect(imports.filter((i) => !i.typeOnly).map((i) => i.from)).toEqual(['electron', '../shared/jobs'])
    const jobs = fs.readFileSync(path.join(root, 'src', 'shared', 'jobs.ts'), 'utf8')
    expect([...jobs.matchAll(/^import\s+(type\s+)?/gm)].every((m) => !!m[1])).toBe(true)
    expect(src).not.toMatch(/ipcRenderer\.invoke\(\s*[a-zA-Z_]/) // no invoke(variable): each channel is written out
  })
})

describe('preload (built bundle out/preload/index.js)', () => {
  const bundle = path.join(root, 'out', 'preload', 'index.js')

  it('is CommonJS that requires nothing but electron (no zod, no chunks)', (ctx) => {
    if (!fs.existsSync(bundle)) ctx.skip(true, 'out/preload/index.js not built: run `npm run build` (npm test does)')
    const code = fs.readFileSync(bundle, 'utf8')
    expect(code).not.toMatch(/^\s*(import|export)\s/m)
    const requires = [...code.matchAll(/require\(\s*["'`]([^"'`]+)["'`]\s*\)/g)].map((m) => m[1])
    expect(requires.length).toBeGreaterThan(0)
    expect([...new Set(requires)]).toEqual(['electron'])
    expect(code).not.toMatch(/require\(\s*["']zod["']\s*\)/)
    expect(code).not.toMatch(/\bzod\b/)
    expect(fs.readdirSync(path.dirname(bundle)).filter((f) => f.endsWith('.js') || f.endsWith('.mjs'))).toEqual(['index.js'])
  })

  it('run as a sandboxed preload would be, exposes the same API as the source', (ctx) => {
    if (!fs.existsSync(bundle)) ctx.skip(true, 'out/preload/index.js not built: run `npm run build` (npm test does)')
    const srcDir = path.join(root, 'src')
    const builtAt = fs.statSync(bundle).mtimeMs
    const contractDir = path.join(srcDir, 'shared', 'contract')
    const contractFiles = fs.readdirSync(contractDir).map((f) => path.join(contractDir, f))
    const newer = [path.join(srcDir, 'preload', 'index.ts'), ...contractFiles].filter((f) => fs.statSync(f).mtimeMs > builtAt)
    if (newer.length) ctx.skip(true, `out/ is older than ${newer.map((f) => path.relative(root, f)).join(', ')}: run \`npm run build\``)
    const exposed = new Map<string, Record<string, unknown>>()
    const invoked: string[] = []
    const electron = {
      contextBridge: { exposeInMainWorld: (k: string, v: Record<string, unknown>) => exposed.set(k, v) },
      ipcRenderer: { invoke: (c: string) => (invoked.push(c), Promise.resolve(null)), on() {}, removeListener() {} },
    }
    // A sandboxed preload gets a require that knows only a few modules; ours needs only electron.
    const sandboxRequire = (id: string) => {
      if (id === 'electron') return electron
      throw new Error(`module not found in sandboxed preload: ${id}`)
    }
    const module = { exports: {} }
    // The bundle wrapped the way Node wraps a CommonJS module: evaluating it yields that wrapper function.
    const wrapper = vm.runInNewContext(`(function (require, module, exports) {${fs.readFileSync(bundle, 'utf8')}\n})`, {}, { filename: bundle }) as (
      require: (id: string) => unknown,
      module: { exports: object },
      exports: object,
    ) => void
    wrapper(sandboxRequire, module, module.exports)
    const api = exposed.get('recallscope')!
    expect(Object.keys(api).sort()).toEqual([...channels, 'onJobProgress'].sort())
    for (const c of channels) (api[c] as (i: unknown) => unknown)({})
    expect(invoked).toEqual(channels.map(String))
  })
})
