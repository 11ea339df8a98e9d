/**
 * Framework stores through the CLI: info says what was detected and why, recall runs the
 * framework's preset, trace and eval work (with nothing logged / no cases), a folder nobody
 * recognises gets one clear line naming what was looked for. Nothing under the store changes.
 */
import fs from 'node:fs'
import Database from 'better-sqlite3'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { RecallTrace } from '../../src/shared/types'
import { main } from '../../src/main/cli/index'
import { buildCrewaiLance, pyIsoUtc } from '../helpers/frameworks/crewai'
import { buildMcpMemoryService } from '../helpers/frameworks/mcpMemoryService'
import { hashTree } from '../helpers/frameworks/hashTree'
import { tmpDir } from '../helpers/tmp'

const NOW = Date.UTC(2026, 5, 1, 12, 0, 0)
const DAY = 86_400_000
let t: ReturnType<typeof tmpDir>
let lance: string
let mcp: string

async function run(...args: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = ''
  let err = ''
  const code = await main(args, { out: (s) => (out += `${s}\n`), err: (s) => (err += `${s}\n`) })
  return { code, out, err }
}

beforeAll(async () => {
  t = tmpDir()
  lance = await buildCrewaiLance(path.join(t.dir, 'memory'), 4, [
    { id: 'x', content: 'deploy needs the VPN', importance: 1, createdAt: pyIsoUtc(NOW), embedding: [1, 0, 0, 0] },
    { id: 'y', content: 'lunch is at noon', importance: 0, createdAt: pyIsoUtc(NOW - 30 * DAY), embedding: [0, 1, 0, 0] },
  ])
  fs.mkdirSync(path.join(t.dir, 'mcp'))
  mcp = buildMcpMemoryService(path.join(t.dir, 'mcp'), 4, [{ content: 'deploy needs the VPN', createdAt: NOW / 1000, embedding: [1, 0, 0, 0] }])
}, 120_000)
afterAll(() => t.cleanup())

describe('CLI on framework stores', () => {
  it('info, recall --preset crewai, trace list, eval on the CrewAI LanceDB folder; folder unchanged', async () => {
    const before = hashTree(lance)
    const info = await run('info', '--db', lance)
    expect(info.code).toBe(0)
    expect(info.out).toMatch(/crewai-lancedb, read-only/)
    expect(info.out).toMatch(/detected: LanceDB folder with table 'memories' \(2 rows, 2 with a vector\)/)

    const r = await run(
      'recall',
      '--db',
      lance,
      '--query',
      'vpn',
      '--preset',
      'crewai',
      '--query-vector',
      '[1,0,0,0]',
      '--now',
      new Date(NOW).toISOString(),
      '--json',
    )
    expect(r.code).toBe(0)
    const trace = JSON.parse(r.out) as RecallTrace
    expect(trace.preset).toBe('crewai')
    // 0.5·cos + 0.3·0.5^(age/30 d) + 0.2·importance: x = 0.5 + 0.3 + 0.2; y = 0 + 0.15 + 0
    expect(trace.results.map((x) => [x.id, Number(x.score.toFixed(6))])).toEqual([
      ['x', 1],
      ['y', 0.15],
    ])

    const tl = await run('trace', 'list', '--db', lance, '--json')
    expect(tl.code).toBe(0)
    const none = await run('eval', '--db', lance, '--json')
    expect(none.code).not.toBe(0) // no eval cases yet: a clear typed error, never a crash
    expect(JSON.parse(none.out)).toMatchObject({ ok: false, error: { code: 'NOT_FOUND' } })
    // A judged case in the workspace (ours, beside the folder): eval runs over the framework store.
    const ws = new Database(`${lance}.recallscope`)
    ws.prepare(`INSERT INTO eval_cases (id, name, query, relevant, split) VALUES ('c1', 'vpn', 'VPN deploy', '[{"id":"x","grade":3}]', 'test')`).run()
    ws.close()
    const ev = await run('eval', '--db', lance, '--preset', 'crewai', '--set', 'mode=lexical', '--split', 'all', '--k', '1', '--json')
    expect(ev.code).toBe(0)
    expect(JSON.parse(ev.out)).toMatchObject({ metrics: { 'recall@1': 1 } })
    expect(hashTree(lance)).toEqual(before)
  })

  it('recall --preset mcp-memory-service on its sqlite-vec DB', async () => {
    const r = await run(
      'recall',
      '--db',
      mcp,
      '--query',
      'VPN',
      '--preset',
      'mcp-memory-service',
      '--query-vector',
      '[1,0,0,0]',
      '--now',
      new Date(NOW).toISOString(),
      '--json',
    )
    expect(r.code).toBe(0)
    const trace = JSON.parse(r.out) as RecallTrace
    expect(trace.results).toHaveLength(1)
    expect(trace.results[0].score).toBeCloseTo(0.7 * 1 + 0.3 * 1, 5)
  })

  it('lists the framework presets and names them in --json', async () => {
    const list = await run('recall', '--preset')
    expect(list.code).toBe(0)
    // Framework presets are listed with the seed presets, marked "framework".
    for (const name of ['crewai', 'mcp-memory-service']) expect(list.out).toMatch(new RegExp(`\\n  ${name} +framework `))
    const one = await run('recall', '--preset', 'crewai', '--json')
    expect(one.code).toBe(0)
    const p = JSON.parse(one.out) as { name: string; framework: { name: string; source: string }; description: string; config: { weights: unknown } }
    expect(p.name).toBe('crewai')
    expect(p.framework.source).toMatch(/crewAI/i)
    expect(p.description).toContain('Not expressible:') // what the engine cannot reproduce is said
    expect(p.config.weights).toEqual({ similarity: 0.5, lexical: 0, recency: 0.3, salience: 0.2 })
  })

  it('a folder that is none of these: one clear line naming what was looked for', async () => {
    const dir = path.join(t.dir, 'empty-folder')
    fs.mkdirSync(dir)
    const r = await run('info', '--db', dir)
    expect(r.code).not.toBe(0)
    expect(r.err).toMatch(/is a folder recallscope does not recognise \(looked for: /)
    for (const what of [/memories\.lance/, /memory\.db/, /system\//]) expect(r.err).toMatch(what)
  })
})
