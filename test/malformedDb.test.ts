/**
 * Issue 10, MEDIUM 4–6: deep JSON, corrupt files and bad timestamps are counted as
 * malformed or answered with a typed error; never fatal, never INTERNAL, and a failed
 * open leaves the previous DB open.
 */
import fs from 'node:fs'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { App } from '../src/main/api/app'
import { createHandlers } from '../src/main/api/handlers'
import { createDispatcher, type Dispatch } from '../src/main/api/register'
import { main } from '../src/main/cli/index'
import { PRESETS } from '../src/shared/presets'
import { damagedDb, damageFtsPages, damagePages, DEEP_JSON, truncateFile, withDeepMetadata } from './helpers/malformedDb'
import { sha256File, tmpDir } from './helpers/tmp'
import { writeDemoDb } from './helpers/demoDb'

let t: ReturnType<typeof tmpDir>
let good: string
beforeAll(() => {
  t = tmpDir()
  good = writeDemoDb(path.join(t.dir, 'good.db'), { memories: 80 }).path
})
afterAll(() => t.cleanup())

async function cli(...args: string[]) {
  let out = ''
  let err = ''
  const code = await main(args, { out: (s) => (out += `${s}\n`), err: (s) => (err += `${s}\n`) })
  return { code, out, err }
}

function mustOk<T = unknown>(r: Awaited<ReturnType<Dispatch>>): T {
  if (!r.ok) throw new Error(`${r.error.code}: ${r.error.message}`)
  // What IPC and the bridge do with every result: it must serialise (a 5000-deep value does not).
  expect(() => JSON.stringify(r)).not.toThrow()
  return r.data as T
}

describe('deep JSON in metadata (5000 levels)', () => {
  let db: string
  let deepId = ''
  let app: App
  let call: Dispatch
  beforeAll(() => {
    db = damagedDb(path.join(t.dir, 'deep.db'), (d) => (deepId = withDeepMetadata(d)))
    app = new App({ mode: 'browser', dataDir: path.join(t.dir, 'home-deep') })
    call = createDispatcher(createHandlers(app))
    app.open(db)
  })
  afterAll(() => app.close())

  it('memories.page / memories.get answer, the metadata counted as malformed', async () => {
    const page = mustOk<{ rows: { id: string; metadata: unknown }[] }>(await call('memories.page', { limit: 1000 }))
    const row = page.rows.find((r) => r.id === deepId)!
    expect(row).toBeDefined()
    expect(row.metadata ?? null).toBeNull()
    const got = mustOk<{ memory: { id: string }; rawMetadata: string | null }>(await call('memories.get', { id: deepId }))
    expect(got.memory.id).toBe(deepId)
    const facts = mustOk<{ malformed: { badMetadata: number } }>(await call('store.facts', {}))
    expect(facts.malformed.badMetadata).toBeGreaterThanOrEqual(1)
  })

  it('recall.run answers (no stack overflow)', async () => {
    const r = await call('recall.run', { query: 'deploy', config: { topK: 200, floor: 0 } })
    expect(r.ok, r.ok ? '' : r.error.message).toBe(true)
    expect(() => JSON.stringify(r)).not.toThrow()
  })

  it('recall --json exits 0 with parseable output', async () => {
    const r = await cli('recall', '--db', db, '--query', 'deploy', '--json', '--set', 'topK=200', '--set', 'floor=0')
    expect(r.code, r.err).toBe(0)
    expect(() => JSON.parse(r.out)).not.toThrow()
  })

  it('import jsonl: the deep line does not abort the import; the metadata is dropped and reported', async () => {
    const input = path.join(t.dir, 'deep.jsonl')
    const lines = [
      { id: 'a', content: 'first', tier: 'working' },
      { id: 'b', content: 'deep one', tier: 'working', metadata: '__DEEP__' },
      { id: 'c', content: 'third', tier: 'working', metadata: { ok: true } },
    ].map((o) => JSON.stringify(o).replace('"__DEEP__"', DEEP_JSON))
    lines.push(`{"id":"d","content":"deep string","metadata":${JSON.stringify(DEEP_JSON)}}`)
    lines.push(DEEP_JSON)
    fs.writeFileSync(input, `${lines.join('\n')}\n`)
    const out = path.join(t.dir, 'deep-import.db')
    const r = await cli('import', 'jsonl', '--in', input, '--out', out, '--json')
    expect(r.code, r.err + r.out).toBe(0)
    const rep = JSON.parse(r.out)
    expect(rep.written.memories).toBe(4) // a, b (metadata dropped), c, d (deep text kept verbatim as invalid)
    expect(rep.skipped).toBe(1) // the bare deep array line
    expect(rep.reasons.map((x: { reason: string }) => x.reason)).toContain('metadata nested too deep (dropped)')
  })
})

describe('corrupt DBs: all-or-nothing open', () => {
  it.each([
    ['damaged pages', (f: string) => damagePages(f, 6)],
    ['truncated', (f: string) => truncateFile(f, 0.4)],
    ['damaged full-text index', (f: string) => damageFtsPages(f)],
  ])('%s: typed error naming the path; the previous DB stays open', async (name, damage) => {
    const bad = path.join(t.dir, `corrupt-${name.replace(' ', '-')}.db`)
    writeDemoDb(bad, { memories: 400 })
    damage(bad)
    const app = new App({ mode: 'browser', dataDir: path.join(t.dir, `home-${name.replace(' ', '-')}`) })
    const call = createDispatcher(createHandlers(app))
    try {
      mustOk(await call('store.open', { path: good }))
      const r = await call('store.open', { path: bad })
      expect(r.ok).toBe(false)
      if (!r.ok) {
        expect(['DB_CORRUPT', 'NOT_SQLITE']).toContain(r.error.code)
        expect(r.error.message).toContain(bad)
        expect(r.error.message).toMatch(/malformed|not a (SQLite )?database/)
      }
      const info = mustOk<{ current: { path: string } | null }>(await call('app.info', {}))
      expect(info.current?.path).toBe(good)
      mustOk(await call('memories.page', { limit: 5 }))
    } finally {
      app.close()
    }
  })

  it('a damaged full-text index says "malformed" (DB_CORRUPT), not the layout probe\'s "vtable constructor failed"', async () => {
    const bad = path.join(t.dir, 'corrupt-fts.db')
    writeDemoDb(bad, { memories: 400 })
    damageFtsPages(bad)
    const r = await cli('info', '--db', bad)
    expect(r.code).toBe(1)
    expect(r.err.trim()).toBe(`recallscope info: ${bad}: database disk image is malformed`)
  })

  it('serve --db corrupt.db: one line, exit 1, no stack', async () => {
    const bad = path.join(t.dir, 'corrupt-serve.db')
    writeDemoDb(bad, { memories: 400 })
    damagePages(bad, 6)
    const r = await cli('serve', '--db', bad)
    expect(r.code).toBe(1)
    expect(r.err.trim().split('\n'), r.err).toHaveLength(1)
    expect(r.err).toContain('database disk image is malformed')
    expect(r.err).not.toMatch(/\n\s+at /)
  })
})

describe('bad recall_events.at', () => {
  it("one 'notatime' row is skipped and counted; the timeline keeps every other event", async () => {
    const db = damagedDb(path.join(t.dir, 'badtime.db'), (d) => {
      d.prepare(`UPDATE recall_events SET at = 'notatime' WHERE rowid = (SELECT min(rowid) FROM recall_events)`).run()
      d.prepare(`UPDATE recall_events SET at = 1e308 WHERE rowid = (SELECT max(rowid) FROM recall_events)`).run()
    })
    const app = new App({ mode: 'browser', dataDir: path.join(t.dir, 'home-time') })
    const call = createDispatcher(createHandlers(app))
    try {
      app.open(db)
      const before = sha256File(db)
      const tl = mustOk<{ total: number; range: { min: number; max: number } | null; bins: { count: number }[]; badTimestamps?: number }>(
        await call('trace.timeline', {}),
      )
      const events = mustOk<{ total: number }>(await call('events.page', { limit: 1 })).total
      expect(tl.badTimestamps).toBe(2)
      expect(tl.total).toBe(events - 2)
      expect(typeof tl.range?.max).toBe('number')
      expect(tl.bins.reduce((n, b) => n + b.count, 0)).toBe(events - 2)
      expect(sha256File(db)).toBe(before)
    } finally {
      app.close()
    }
  })
})

describe('bad vectors and wrong types', () => {
  it('NaN/Infinity/odd-length/text vectors and wrongly typed columns: every read channel answers, counted as malformed', async () => {
    let ids: string[] = []
    const db = damagedDb(
      path.join(t.dir, 'types.db'),
      (d) => {
        ids = d.prepare(`SELECT id FROM memories ORDER BY created_at DESC LIMIT 8`).pluck().all() as string[]
        const model = d.prepare(`SELECT model FROM embeddings WHERE owner_type = 'memory' LIMIT 1`).pluck().get() as string
        const dim = d.prepare(`SELECT dim FROM embeddings WHERE owner_type = 'memory' LIMIT 1`).pluck().get() as number
        const f = new Float32Array(dim).fill(0.1)
        f[0] = Number.NaN
        f[1] = Number.POSITIVE_INFINITY
        const set = d.prepare(`UPDATE embeddings SET vector = ? WHERE owner_type = 'memory' AND owner_id = ? AND model = ?`)
        set.run(Buffer.from(f.buffer), ids[0], model) // NaN / Infinity
        set.run(Buffer.alloc(dim * 4 - 3), ids[1], model) // odd length
        set.run('["a", "b"]', ids[2], model) // JSON text of strings
        set.run(Buffer.alloc(8), ids[3], model) // wrong dimension
        d.prepare(`UPDATE memories SET created_at = 'yesterday', salience = 'high' WHERE id = ?`).run(ids[4])
        d.prepare(`UPDATE memories SET turn = x'00ff', use_count = -3.5, last_used_at = 'never' WHERE id = ?`).run(ids[5])
        d.prepare(`UPDATE memories SET metadata = x'deadbeef', role = 42, kind = 'dream', tier = 'limbo' WHERE id = ?`).run(ids[6])
        d.prepare(
          `UPDATE recall_events SET results = '{"not": "a list"}', config = 'nope', cue = '[[[' WHERE rowid = (SELECT min(rowid) FROM recall_events)`,
        ).run()
      },
      200,
    )
    const before = sha256File(db)
    const app = new App({ mode: 'browser', dataDir: path.join(t.dir, 'home-types') })
    const call = createDispatcher(createHandlers(app))
    try {
      mustOk(await call('store.open', { path: db }))
      const facts = mustOk<{ malformed: Record<string, number> }>(await call('store.facts', {}))
      mustOk(await call('memories.page', { limit: 1000 }))
      for (const id of ids) {
        mustOk(await call('memories.get', { id }))
        const sim = await call('memories.similar', { id, k: 5 })
        expect(sim.ok || sim.error.code !== 'INTERNAL').toBe(true)
      }
      for (const preset of PRESETS.map((p) => p.name)) {
        const r = await call('recall.run', { query: 'deploy staging', preset, config: { floor: 0 } })
        expect(r.ok || r.error.code !== 'INTERNAL', r.ok ? '' : r.error.message).toBe(true)
        expect(() => JSON.stringify(r)).not.toThrow()
      }
      mustOk(await call('events.page', { limit: 1000 }))
      mustOk(await call('trace.timeline', {}))
      const facts2 = mustOk<{ malformed: Record<string, number> }>(await call('store.facts', {}))
      const bad = (m: Record<string, number>) => (m.nonFiniteVector ?? 0) + (m.badVectorShape ?? 0) + (m.wrongDimension ?? 0)
      expect(bad(facts2.malformed)).toBeGreaterThanOrEqual(3)
      expect(facts.malformed.unknownKind + facts.malformed.unknownTier).toBeGreaterThanOrEqual(2)
    } finally {
      app.close()
    }
    expect(sha256File(db)).toBe(before)
  })
})
