/**
 * The store's promises: the agent DB's bytes never change (read-only), reads
 * never fail while an agent writes (WAL), malformed rows are skipped and counted.
 */
import fs from 'node:fs'
import path from 'node:path'
import { spawn } from 'node:child_process'
import Database from 'better-sqlite3'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { openSource } from '../src/main/store/registry'

import { migrate } from '../src/main/store/sqlite/connection'
import { CANONICAL_MIGRATIONS } from '../src/main/store/sqlite/schema'
import { encodeVector } from '../src/main/store/decode'
import { App } from '../src/main/api/app'
import { createHandlers } from '../src/main/api/handlers'
import { createDispatcher } from '../src/main/api/register'
import { sha256File, tmpDir } from './helpers/tmp'
import { writeDemoDb } from './helpers/demoDb'

let t: ReturnType<typeof tmpDir>
beforeAll(() => {
  t = tmpDir()
})
afterAll(() => t.cleanup())

describe('read-only', () => {
  it('a full session of use through the API leaves the agent DB byte-identical', async () => {
    const db = path.join(t.dir, 'ro.db')
    writeDemoDb(db, { memories: 800 })
    const before = sha256File(db)
    const mtime = fs.statSync(db).mtimeMs
    const app = new App({ mode: 'browser', dataDir: path.join(t.dir, 'home') })
    const call = createDispatcher(createHandlers(app))
    const must = async (ch: string, input: unknown) => {
      const r = await call(ch, input)
      if (!r.ok) throw new Error(`${ch}: ${r.error.code} ${r.error.message}`)
      return r.data
    }
    await must('store.open', { path: db })
    await must('store.facts', {})
    await must('memories.facets', {})
    const page = (await must('memories.page', { limit: 50 })) as { rows: { id: string }[] }
    await must('memories.page', { search: 'deploy rollback', limit: 20 })
    await must('memories.page', { kinds: ['semantic'], sort: 'salience', dir: 'asc', limit: 20 })
    await must('sessions.page', { limit: 20 })
    await must('memories.get', { id: page.rows[0].id })
    await must('memories.similar', { id: page.rows[0].id, k: 5 })
    await must('events.page', { limit: 10 })
    // Browser mode has no native dialog: the renderer shows a path field instead.
    expect(await must('store.pick', {})).toEqual({ supported: false, path: null })
    // Every recall preset runs against it too, when the engine is present.
    const presets = await call('recall.presets', {})
    if (presets.ok)
      for (const p of presets.data as { name: string }[])
        await call('recall.run', { query: 'deploy the tier migration', preset: p.name, config: { scope: { agentId: 'agent-coder' } } })
    await must('store.close', {})
    expect(sha256File(db)).toBe(before)
    expect(fs.statSync(db).mtimeMs).toBe(mtime)
    // Our state went to the workspace beside it.
    expect(fs.existsSync(`${db}.recallscope`)).toBe(true)
  })

  it('refuses writes through the agent connection', () => {
    const db = path.join(t.dir, 'ro2.db')
    writeDemoDb(db, { memories: 100 })
    const s = openSource({ path: db })
    try {
      expect(() => s.db.prepare(`UPDATE memories SET content = 'x'`).run()).toThrow(/readonly|query_only|read-only/i)
    } finally {
      s.close()
    }
  })
})

describe('concurrent writer (WAL)', () => {
  it('reads never fail while an agent process keeps writing, and new rows show up', async () => {
    const db = path.join(t.dir, 'wal.db')
    writeDemoDb(db, { memories: 300 })
    const w = new Database(db)
    w.pragma('journal_mode = WAL')
    w.close()
    // The "agent": another process inserting and updating in transactions for ~2 s.
    const script = `
      const D = require(${JSON.stringify(require.resolve('better-sqlite3'))})
      const d = new D(${JSON.stringify(db)})
      d.pragma('busy_timeout = 5000')
      const ins = d.prepare("INSERT INTO memories (id, agent_id, content, created_at, kind, tier, role) VALUES (?, 'agent-coder', ?, ?, 'episodic', 'working', 'user')")
      const upd = d.prepare("UPDATE memories SET last_used_at = ? WHERE rowid % 7 = ?")
      process.stdout.write('writing\\n')
      const end = Date.now() + 2000
      let i = 0
      while (Date.now() < end) {
        d.transaction(() => { for (let k = 0; k < 50; k++) ins.run('w' + (i++), 'written while reading ' + i, Date.now()); upd.run(Date.now(), i % 7) })()
      }
      console.log(i)
      d.close()
    `
    const child = spawn(process.execPath, ['-e', script], { stdio: ['ignore', 'pipe', 'inherit'] })
    let out = ''
    child.stdout.on('data', (d) => (out += d))
    let running = true
    // 'close': its stdout (the count it prints last) has been read in full
    const exited = new Promise<number>((r) => child.on('close', (c) => r(c ?? -1))).finally(() => (running = false))
    const s = openSource({ path: db, busyTimeoutMs: 5000 })
    let reads = 0
    let maxTotal = 0
    const errors: string[] = []
    try {
      // Read for as long as the agent writes: from its first transaction (a loaded machine may take seconds to
      // start a node process) until it exits.
      const started = Date.now() + 60_000
      while (running && !out.startsWith('writing\n') && Date.now() < started) await new Promise((r) => setTimeout(r, 10))
      expect(out, 'the writer started').toMatch(/^writing\n/)
      while (running) {
        try {
          const p = s.memoriesPage({ limit: 20 })
          maxTotal = Math.max(maxTotal, p.total)
          s.sessionsPage({ limit: 5 })
          s.memoriesPage({ search: 'written', limit: 5 })
          reads++
        } catch (e) {
          errors.push((e as Error).message)
        }
        await new Promise((r) => setImmediate(r))
      }
      expect(await exited).toBe(0)
      const written = Number(out.split('\n')[1])
      const total = s.memoriesPage({ limit: 1 }).total
      expect(errors).toEqual([])
      expect(reads).toBeGreaterThan(20)
      expect(written).toBeGreaterThan(0)
      expect(total).toBe(300 + written)
      expect(maxTotal).toBeGreaterThan(300)
    } finally {
      s.close()
    }
  })
})

describe('malformed rows', () => {
  it('are skipped and counted, never fatal', () => {
    const db = path.join(t.dir, 'bad.db')
    const d = new Database(db)
    migrate(d, CANONICAL_MIGRATIONS)
    const ins = d.prepare(`INSERT INTO memories (id, agent_id, role, kind, tier, content, created_at, metadata, salience) VALUES (?, 'a', ?, ?, ?, ?, ?, ?, ?)`)
    const emb = d.prepare(`INSERT INTO embeddings (owner_type, owner_id, model, dim, vector) VALUES ('memory', ?, 'm', ?, ?)`)
    const good = (i: number) => [1, i % 3, 0.5, 0.25].map(Number)
    for (let i = 0; i < 10; i++) {
      ins.run(`ok${i}`, 'user', 'episodic', 'working', `fine memory ${i}`, 1000 + i, JSON.stringify({ i }), 0.5)
      emb.run(`ok${i}`, 4, encodeVector(good(i)))
    }
    ins.run('badjson', 'user', 'episodic', 'working', 'broken metadata', 2000, '{"a": ', 0.5)
    ins.run('badrole', 'critic', 'dream', 'limbo', 'unknown enums', 2001, null, 7)
    ins.run('wrongdim', 'assistant', 'semantic', 'long_term', 'short vector', 2002, null, 0.1)
    emb.run('wrongdim', 3, encodeVector([1, 2, 3]))
    ins.run('nan', 'assistant', 'semantic', 'long_term', 'nan vector', 2003, null, 0.1)
    emb.run('nan', 4, encodeVector([1, NaN, 0, 0]))
    ins.run('oddbytes', 'assistant', 'semantic', 'long_term', 'odd byte count', 2004, null, 0.1)
    emb.run('oddbytes', 4, Buffer.from([1, 2, 3, 4, 5, 6]))
    d.close()

    const s = openSource({ path: db })
    try {
      const page = s.memoriesPage({ limit: 100 })
      expect(page.total).toBe(15)
      const byId = new Map(page.rows.map((r) => [r.id, r]))
      expect(byId.get('badjson')!.metadata).toBeNull()
      expect(byId.get('badrole')!.role).toBeNull()
      expect(byId.get('badrole')!.kind).toBeNull()
      expect(byId.get('badrole')!.salience).toBe(1) // clamped to 0..1
      const idx = s.vectors('m')
      expect(idx.dim).toBe(4)
      expect(idx.count).toBe(10)
      expect(idx.get('nan')).toBeNull()
      expect(idx.get('wrongdim')).toBeNull()
      const f = s.facts()
      expect(f.malformed.badMetadata).toBe(1)
      expect(f.malformed.unknownRole).toBe(1)
      expect(f.malformed.unknownKind).toBe(1)
      expect(f.malformed.unknownTier).toBe(1)
      expect(f.malformed.nonFiniteVector).toBe(1)
      expect(f.malformed.wrongDimension).toBe(1) // 3 floats where 4 are expected
      expect(f.malformed.badVectorShape).toBe(1) // 6 bytes: not whole float32s
      // The memory detail still shows a malformed row as it is.
      expect(s.getMemory('badjson')!.content).toBe('broken metadata')
    } finally {
      s.close()
    }
  })
})

describe('write mode', () => {
  it('refreshOnRecall writes last_used_at only in write mode; read-only refuses and the bytes stay the same', async () => {
    const db = path.join(t.dir, 'write.db')
    writeDemoDb(db, { memories: 300, events: false })
    const before = sha256File(db)
    const app = new App({ mode: 'browser', dataDir: path.join(t.dir, 'home-w') })
    const call = createDispatcher(createHandlers(app))
    const open = (await call('store.open', { path: db })) as { ok: boolean }
    expect(open.ok).toBe(true)
    const trace = (await call('recall.run', { query: 'deploy the tier migration', preset: 'fieldguide', config: { floor: null } })) as {
      ok: true
      data: { refreshed: string[]; now: number }
    }
    expect(trace.ok).toBe(true)
    const ids = trace.data.refreshed
    expect(ids.length).toBe(5) // fieldguide: top 5, refresh on recall
    const refused = await call('recall.refresh', { ids, now: trace.data.now })
    expect(refused).toMatchObject({ ok: false, error: { code: 'READ_ONLY' } })
    expect(sha256File(db)).toBe(before)

    await call('store.open', { path: db, write: true })
    const direct = new Database(db, { readonly: true })
    const useBefore = new Map(
      direct
        .prepare(`SELECT id, use_count FROM memories WHERE id IN (${ids.map(() => '?').join(',')})`)
        .all(...ids)
        .map((r) => [(r as { id: string }).id, (r as { use_count: number }).use_count]),
    )
    direct.close()
    const at = Date.UTC(2026, 10, 1, 12)
    const wrote = await call('recall.refresh', { ids, now: at })
    expect(wrote).toEqual({ ok: true, data: { updated: 5 } })
    app.close()
    const after = new Database(db, { readonly: true })
    const rows = after.prepare(`SELECT id, last_used_at, use_count FROM memories WHERE id IN (${ids.map(() => '?').join(',')})`).all(...ids) as {
      id: string
      last_used_at: number
      use_count: number
    }[]
    const untouched = after
      .prepare(`SELECT count(*) FROM memories WHERE last_used_at = ? AND id NOT IN (${ids.map(() => '?').join(',')})`)
      .pluck()
      .get(at, ...ids)
    after.close()
    for (const r of rows) {
      expect(r.last_used_at).toBe(at)
      expect(r.use_count).toBe((useBefore.get(r.id) ?? 0) + 1)
    }
    expect(untouched).toBe(0)
  })
})
