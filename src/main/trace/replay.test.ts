/**
 * Replay: every demo event replays identically at its own `at` with its logged
 * config (the generator and the engine agree), and a DB edited after the event
 * shows exactly that edit, explained, and nothing else.
 */
import fs from 'node:fs'
import path from 'node:path'
import Database from 'better-sqlite3'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildCue } from '../../shared/cue'
import { validateConfig } from '../../shared/presets'
import type { RecallEvent } from '../../shared/types'
import { tmpDir } from '../../../test/helpers/tmp'
import { createEmbedder } from '../embed/index'
import { hashEmbed } from '../embed/hashing'
import { runRecall } from '../recall/engine'
import { openSource } from '../store/registry'

import { diffConfig, diffResults, replayEvent } from './replay'
import { writeDemoDb } from '../../../test/helpers/demoDb'

const HOUR = 3_600_000
let t: ReturnType<typeof tmpDir>
let demo: string

beforeAll(() => {
  t = tmpDir()
  demo = writeDemoDb(path.join(t.dir, 'demo.db'), { memories: 1500, seed: 5 }).path
})
afterAll(() => t.cleanup())

/** A copy of the demo DB to edit with a writable connection (the agent DB itself is never written). */
function copyDemo(name: string): string {
  const p = path.join(t.dir, `${name}.db`)
  for (const s of ['', '-wal', '-shm']) if (fs.existsSync(demo + s)) fs.copyFileSync(demo + s, p + s)
  return p
}
const open = (p: string) => openSource({ path: p, workspacePath: `${p}.ws` })

/** cosine of two vectors, computed here (not by the engine). */
function cosine(a: ArrayLike<number>, b: ArrayLike<number>): number {
  let d = 0
  let na = 0
  let nb = 0
  for (let i = 0; i < a.length; i++) {
    d += a[i] * b[i]
    na += a[i] * a[i]
    nb += b[i] * b[i]
  }
  return d / Math.sqrt(na * nb)
}

describe('diffResults', () => {
  it('classifies same / rescored / reordered / missing / extra by relative position', () => {
    const logged = [
      { id: 'a', score: 0.9 },
      { id: 'b', score: 0.8 },
      { id: 'c', score: 0.7 },
      { id: 'd', score: 0.6 },
      { id: 'e', score: 0.5 },
    ]
    const replayed = [
      { id: 'a', score: 0.9 },
      { id: 'c', score: 0.7 },
      { id: 'b', score: 0.65 },
      { id: 'e', score: 0.55 },
      { id: 'x', score: 0.4 },
    ]
    const rows = diffResults(logged, replayed)
    const by = Object.fromEntries(rows.map((r) => [r.id, r]))
    expect(by.a.status).toBe('same')
    expect(by.b.status).toBe('reordered')
    expect(by.c.status).toBe('reordered')
    expect(by.d.status).toBe('missing')
    // e: after d left it is 4th of both shared lists; its score changed
    expect(by.e.status).toBe('rescored')
    expect(by.e.scoreDelta).toBeCloseTo(0.05, 12)
    expect(by.x.status).toBe('extra')
    expect(rows.map((r) => r.id)).toEqual(['a', 'b', 'c', 'd', 'e', 'x'])
  })

  it('a rank moved only by a removal stays same, marked shifted', () => {
    const rows = diffResults(
      [
        { id: 'a', score: 1 },
        { id: 'b', score: 0.5 },
      ],
      [{ id: 'b', score: 0.5 }],
    )
    expect(rows[1]).toMatchObject({ id: 'b', status: 'same', shifted: true })
  })

  it('diffConfig lists dotted paths that differ', () => {
    const a = validateConfig({ ...demoConfig(), weights: { similarity: 0.6, lexical: 0, recency: 0.25, salience: 0.15 } })
    const b = { ...a, topK: 7, weights: { ...a.weights, recency: 0.4 } }
    expect(diffConfig(a, b)).toEqual([
      { path: 'topK', logged: 5, replay: 7 },
      { path: 'weights.recency', logged: 0.25, replay: 0.4 },
    ])
  })
})

function demoConfig() {
  const s = open(demo)
  try {
    return s.eventsPage({ limit: 1000 }).rows.find((e) => e.preset === 'fieldguide')!.config as ReturnType<typeof validateConfig>
  } finally {
    s.close()
  }
}

describe('replay of the demo log', () => {
  it('every event replays identically at its own `now` with its logged config', async () => {
    const store = open(demo)
    try {
      const events = store.eventsPage({ limit: 1000 }).rows
      expect(events.length).toBeGreaterThan(100)
      let compared = 0
      const ms: number[] = []
      for (const e of events) {
        const r = await replayEvent(store, e.id)
        ms.push(r.tookMs)
        expect(r.identical, `${e.id} ${JSON.stringify(r.counts)}`).toBe(true)
        expect(r.trace.results.map((x) => ({ id: x.id, score: x.score }))).toEqual(e.results)
        expect(r.now).toBe(e.at)
        expect(r.configSource).toBe('logged')
        expect(r.vector.source).toBe('embedder')
        compared += e.results.length
      }
      expect(compared).toBeGreaterThan(100)
      ms.sort((a, b) => a - b)
      console.log(
        `replay: ${events.length} events, median ${ms[ms.length >> 1].toFixed(1)} ms, p95 ${ms[Math.floor(ms.length * 0.95)].toFixed(1)} ms, max ${ms[ms.length - 1].toFixed(1)} ms`,
      )
    } finally {
      store.close()
    }
  })
})

describe('replay after the DB changed', () => {
  it('a last_used_at overwritten after the event shows exactly that memory, with the recency arithmetic', async () => {
    const p = copyDemo('lastused')
    const w = new Database(p)
    // Simulate an agent: at the event the memory had been used 2 h before; the agent logs the recall
    // (computed by the engine on that state); later it uses the memory again, overwriting last_used_at.
    const store0 = open(p)
    const src = store0.eventsPage({ limit: 1000 }).rows.find((e) => e.preset === 'fieldguide' && e.results.length >= 3)!
    const cfg = validateConfig(src.config)
    const target = src.results[1].id
    const m = store0.getMemory(target)!
    const usedAt = src.at - 2 * HOUR
    w.prepare('UPDATE memories SET last_used_at = ? WHERE id = ?').run(usedAt, target)
    store0.close()
    const store1 = open(p)
    const logged = await runRecall(store1, { text: src.query!, cue: src.cue }, cfg, src.at, { embedder: createEmbedder('hashing'), preset: src.preset })
    store1.close()
    expect(logged.results.some((r) => r.id === target)).toBe(true)
    const ev: RecallEvent = { ...src, id: 'ev-agent-1', results: logged.results.map((r) => ({ id: r.id, score: r.score })) }
    w.prepare(
      `INSERT INTO recall_events (id, at, agent_id, user_id, session_id, turn, query, cue, preset, config, results) VALUES (?,?,?,?,?,?,?,?,?,?,?)`,
    ).run(
      ev.id,
      ev.at,
      ev.agentId,
      ev.userId,
      ev.sessionId,
      ev.turn,
      ev.query,
      JSON.stringify(ev.cue),
      ev.preset,
      JSON.stringify(cfg),
      JSON.stringify(ev.results),
    )
    const laterUse = src.at + 24 * HOUR
    w.prepare('UPDATE memories SET last_used_at = ? WHERE id = ?').run(laterUse, target)
    w.close()

    const store = open(p)
    try {
      const r = await replayEvent(store, ev.id)
      expect(r.identical).toBe(false)
      const row = r.rows.find((x) => x.id === target)!
      expect(row.status).not.toBe('same')
      expect(row.causes.map((c) => c.code)).toContain('last-used-changed')
      const lu = row.causes.find((c) => c.code === 'last-used-changed')!
      expect(lu.text).toContain(new Date(laterUse).toISOString().slice(0, 16).replace('T', ' '))
      // Independent arithmetic: the replay measures age from created_at, the log from the 2 h old use.
      const hl = cfg.recency.halfLifeHours
      const recLogged = Math.pow(0.5, 2 / hl)
      const recNow = Math.pow(0.5, (src.at - m.createdAt) / HOUR / hl)
      const replayedScore = (r.trace.results.find((x) => x.id === target) ?? r.trace.dropped.find((x) => x.id === target))!.score
      const loggedScore = ev.results.find((x) => x.id === target)!.score
      expect(loggedScore - replayedScore).toBeCloseTo(cfg.weights.recency * (recLogged - recNow), 12)
      // …and nothing else changed: every other shared row keeps its score; others only move around it.
      for (const x of r.rows) {
        if (x.id === target) continue
        if (x.scoreDelta !== null) expect(Math.abs(x.scoreDelta)).toBeLessThan(1e-12)
        for (const c of x.causes) expect(['displaced', 'gate']).toContain(c.code)
      }
    } finally {
      store.close()
    }
  })

  it('content + vector edited after the event: that memory is named with a similarity change, nothing else', async () => {
    const p = copyDemo('edited')
    const store0 = open(p)
    const ev = store0.eventsPage({ limit: 1000 }).rows.find((e) => e.preset === 'fieldguide' && e.results.length >= 3)!
    const target = ev.results[0].id
    const m = store0.getMemory(target)!
    store0.close()
    const text = 'Quarterly llama grooming rota for the alpaca farm in Peru'
    const w = new Database(p)
    const rid = w.prepare('SELECT rowid FROM memories WHERE id = ?').pluck().get(target) as number
    w.prepare(`INSERT INTO memories_fts (memories_fts, rowid, content, summary) VALUES ('delete', ?, ?, ?)`).run(rid, m.content, m.summary)
    w.prepare('UPDATE memories SET content = ? WHERE id = ?').run(text, target)
    w.prepare('INSERT INTO memories_fts (rowid, content, summary) VALUES (?, ?, ?)').run(rid, text, m.summary)
    const v = hashEmbed(text)
    w.prepare(`UPDATE embeddings SET vector = ? WHERE owner_type = 'memory' AND owner_id = ?`).run(Buffer.from(v.buffer, v.byteOffset, v.byteLength), target)
    w.close()

    const store = open(p)
    try {
      const r = await replayEvent(store, ev.id)
      expect(r.identical).toBe(false)
      const row = r.rows.find((x) => x.id === target)!
      expect(row.status).toBe('missing')
      const codes = row.causes.map((c) => c.code)
      expect(codes).toContain('vector-changed')
      expect(codes).not.toContain('last-used-changed')
      // Its similarity today, computed here: the cue (fieldguide embeds the cue) against the new text.
      const sim = cosine(hashEmbed(buildCue(ev.cue!)), v)
      const cand = r.trace.candidates.find((c) => c.id === target)
      if (cand) expect(cand.similarity!).toBeCloseTo(sim, 5)
      for (const x of r.rows) {
        if (x.id === target) continue
        if (x.scoreDelta !== null) expect(Math.abs(x.scoreDelta)).toBeLessThan(1e-12)
        for (const c of x.causes) expect(['displaced', 'gate']).toContain(c.code)
        if (x.status === 'extra') expect(x.causes[0].text).toContain(target)
      }
    } finally {
      store.close()
    }
  })

  it('deleted, and moved out of scope: each named with its cause', async () => {
    const p = copyDemo('scope')
    const store0 = open(p)
    const ev = store0.eventsPage({ limit: 1000 }).rows.find((e) => e.preset === 'fieldguide' && e.results.length >= 3)!
    store0.close()
    const [gone, archived] = [ev.results[0].id, ev.results[1].id]
    const w = new Database(p)
    w.prepare('DELETE FROM memories WHERE id = ?').run(gone)
    w.prepare(`UPDATE memories SET tier = 'archived' WHERE id = ?`).run(archived)
    w.close()
    const store = open(p)
    try {
      const r = await replayEvent(store, ev.id)
      const byId = new Map(r.rows.map((x) => [x.id, x]))
      expect(byId.get(gone)!.status).toBe('missing')
      expect(byId.get(gone)!.causes.map((c) => c.code)).toEqual(['deleted'])
      expect(byId.get(archived)!.status).toBe('missing')
      const sc = byId.get(archived)!.causes.find((c) => c.code === 'out-of-scope')!
      expect(sc.text).toContain('scope.tiers')
      expect(sc.text).toContain('archived')
    } finally {
      store.close()
    }
  })

  it('uses the logged query vector when the event has one (optional query_vector column)', async () => {
    const p = copyDemo('vector')
    const store0 = open(p)
    const fg = store0.eventsPage({ limit: 1000 }).rows.filter((e) => e.preset === 'fieldguide' && e.results.length >= 3)
    const [ev, other] = [fg[0], fg[1].id]
    store0.close()
    const w = new Database(p)
    w.exec('ALTER TABLE recall_events ADD COLUMN query_vector BLOB')
    const good = hashEmbed(buildCue(ev.cue!))
    w.prepare('UPDATE recall_events SET query_vector = ? WHERE id = ?').run(Buffer.from(good.buffer, good.byteOffset, good.byteLength), ev.id)
    // another event gets the vector of an unrelated text, as JSON: replaying it must use that vector
    w.prepare('UPDATE recall_events SET query_vector = ? WHERE id = ?').run(JSON.stringify(Array.from(hashEmbed('alpaca llama grooming rota Peru'))), other)
    w.close()
    const store = open(p)
    try {
      const r = await replayEvent(store, ev.id)
      expect(r.vector.source).toBe('logged')
      expect(r.identical).toBe(true)
      const r2 = await replayEvent(store, other)
      expect(r2.vector.source).toBe('logged')
      expect(r2.identical).toBe(false)
    } finally {
      store.close()
    }
  })
})

describe('a logged context block (optional `context` column)', () => {
  it('makes an edit of an injected memory’s text visible even when its score is unchanged', async () => {
    const p = copyDemo('context')
    const store0 = open(p)
    const ev = store0.eventsPage({ limit: 1000 }).rows.find((e) => e.preset === 'fieldguide' && e.results.length >= 3)!
    const mems = store0.getMemories(ev.results.map((r) => r.id))
    store0.close()
    // What the agent injected: fieldguide prints each memory's text after its provenance label.
    const block = ev.results.map((r) => `[recalled] ${mems.get(r.id)!.content}`).join('\n')
    const target = ev.results[1].id
    const w = new Database(p)
    w.exec('ALTER TABLE recall_events ADD COLUMN context TEXT')
    w.prepare('UPDATE recall_events SET context = ? WHERE id = ?').run(block, ev.id)
    // Edit the text only (no re-embedding, so the dense score is unchanged; lexical weight is 0).
    w.prepare('UPDATE memories SET content = ? WHERE id = ?').run(`${mems.get(target)!.content} (corrected)`, target)
    w.close()
    const store = open(p)
    try {
      const r = await replayEvent(store, ev.id)
      const row = r.rows.find((x) => x.id === target)!
      expect(row.causes.map((c) => c.code)).toEqual(['content-changed'])
      expect(row.causes[0].text).toContain('(corrected)')
      for (const x of r.rows) if (x.id !== target) expect(x.causes.filter((c) => c.code === 'content-changed')).toEqual([])
      expect(r.notes.some((n) => n.code === 'content-changed')).toBe(true)
    } finally {
      store.close()
    }
  })
})

describe('replay with the current config ("today")', () => {
  it('explains config edits, later memories and later uses', async () => {
    const store = open(demo)
    try {
      const ev = store.eventsPage({ limit: 1000 }).rows.find((e) => e.preset === 'fieldguide' && e.results.length >= 3)!
      const now = Date.UTC(2026, 10, 25)
      const r = await replayEvent(store, ev.id, { mode: 'current', now, config: { weights: { recency: 0.4 } } })
      expect(r.now).toBe(now)
      expect(r.configChanges).toEqual([{ path: 'weights.recency', logged: 0.25, replay: 0.4 }])
      expect(r.notes.map((n) => n.text)).toContain('config differs: weights.recency 0.25 → 0.4')
      expect(r.config.weights.recency).toBe(0.4)
      const mems = store.getMemories(r.rows.map((x) => x.id))
      let later = 0
      for (const x of r.rows) {
        const m = mems.get(x.id)!
        if (x.status === 'extra' && m.createdAt > ev.at) {
          later++
          const c = x.causes.find((c) => c.code === 'created-after')!
          expect(c.text).toContain(`event ${new Date(ev.at).toISOString().slice(0, 16).replace('T', ' ')}`)
        }
        if (x.status !== 'same' && x.logged && x.replayed) expect(x.causes.some((c) => c.code === 'config-differs')).toBe(true)
        if (x.status !== 'same' && m.lastUsedAt !== null && m.lastUsedAt > ev.at && m.lastUsedAt <= now && x.logged && x.replayed)
          expect(x.causes.map((c) => c.code)).toContain('last-used-changed')
      }
      expect(later).toBeGreaterThan(0)
    } finally {
      store.close()
    }
  })

  it('a current replay needs `now`; an unknown event is NOT_FOUND', async () => {
    const store = open(demo)
    try {
      const ev = store.eventsPage({ limit: 1 }).rows[0]
      await expect(replayEvent(store, ev.id, { mode: 'current' })).rejects.toMatchObject({ code: 'BAD_INPUT' })
      await expect(replayEvent(store, 'ev-nope')).rejects.toMatchObject({ code: 'NOT_FOUND' })
    } finally {
      store.close()
    }
  })
})
