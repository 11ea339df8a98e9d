/**
 * Lexical index. The agent DB's own `memories_fts` when it has one; otherwise a
 * contentless FTS5 table in the workspace DB (rowid = the memory's `_rid`),
 * built on first use and topped up incrementally with rows added since.
 */
import type Database from 'better-sqlite3'

// The last utterance tokenized: a recall asks for the same text's words three times (has it words?
// the FTS query, the JS bm25's phrases), an eval does so for every case.
let lastText: string | null = null
let lastTokens: readonly string[] = []
let lastQuery: string | null = null

/** Words of an utterance (letters/digits), lower-cased, in order, unique. */
export function ftsTokens(text: string): string[] {
  if (text !== lastText) {
    const seen = new Set<string>()
    const out: string[] = []
    for (const m of text.toLowerCase().matchAll(/[\p{L}\p{N}_]+/gu)) {
      const t = m[0]
      if (!seen.has(t)) {
        seen.add(t)
        out.push(t)
      }
    }
    lastTokens = out
    lastQuery = out.length === 0 ? null : out.map((t) => `"${t.replace(/"/g, '""')}"`).join(' OR ')
    lastText = text
  }
  return lastTokens.slice()
}

/**
 * A raw utterance → a safe FTS5 query: every word quoted, OR-ed (bm25 ranks
 * documents matching more/rarer words higher). null when there is no word.
 */
export function toFtsQuery(text: string): string | null {
  ftsTokens(text)
  return lastQuery
}

export interface FtsState {
  source: string
  maxRid: number
  rowCount: number
}

/**
 * Bring the workspace FTS index up to date with the agent's memories.
 * `signature` identifies the agent DB layout; a different one, or fewer rows
 * than indexed (deletions), rebuilds from scratch. Returns rows indexed.
 */
export function syncWorkspaceFts(
  agent: Database.Database,
  ws: Database.Database,
  memoriesSql: string,
  signature: string,
  onProgress?: (done: number, total: number) => boolean | void,
): number {
  const stats = agent.prepare(`SELECT count(*) AS n, max(_rid) AS maxRid FROM (${memoriesSql})`).get() as { n: number; maxRid: number | null }
  const state = ws.prepare(`SELECT source, max_rid AS maxRid, row_count AS rowCount FROM ws_fts_state WHERE id = 1`).get() as FtsState | undefined
  let after = -1
  let indexed = 0
  if (state && state.source === signature && stats.n >= state.rowCount) {
    if (stats.maxRid === null || stats.maxRid <= state.maxRid) return 0
    after = state.maxRid
    indexed = state.rowCount
  } else {
    ws.exec(`DELETE FROM ws_fts; DELETE FROM ws_fts_state;`)
  }
  const total = stats.n - indexed
  const rows = agent.prepare(`SELECT _rid, content, summary FROM (${memoriesSql}) WHERE _rid > ? ORDER BY _rid`).raw(true).iterate(after) as Iterable<
    [number, string | null, string | null]
  >
  const ins = ws.prepare(`INSERT INTO ws_fts (rowid, content, summary) VALUES (?, ?, ?)`)
  const save = ws.prepare(
    `INSERT INTO ws_fts_state (id, source, max_rid, row_count) VALUES (1, ?, ?, ?)
     ON CONFLICT(id) DO UPDATE SET source = excluded.source, max_rid = excluded.max_rid, row_count = excluded.row_count`,
  )
  let done = 0
  let maxRid = after
  let batch: [number, string | null, string | null][] = []
  const flush = ws.transaction((b: typeof batch) => {
    for (const [rid, c, s] of b) ins.run(rid, c ?? '', s ?? '')
    save.run(signature, maxRid, indexed + done)
  })
  for (const r of rows) {
    batch.push(r)
    if (r[0] > maxRid) maxRid = r[0]
    if (batch.length === 5000) {
      done += batch.length
      flush(batch)
      batch = []
      if (onProgress?.(done, total) === false) return done
    }
  }
  done += batch.length
  flush(batch)
  onProgress?.(done, total)
  return done
}

/**
 * Highlight query words in a text: a window around the first hit, cut into
 * segments. Matches words sharing a prefix with a query token (the index uses
 * the porter stemmer, so "deploys" should light up for "deploy").
 */
export function makeSnippet(text: string, query: string, width = 160): { text: string; hit: boolean }[] {
  const toks = ftsTokens(query).map((t) => (t.length > 4 ? t.slice(0, Math.max(4, t.length - 2)) : t))
  if (toks.length === 0) return [{ text: text.slice(0, width), hit: false }]
  const re = /[\p{L}\p{N}_]+/gu
  const hits: [number, number][] = []
  for (const m of text.matchAll(re)) {
    const w = m[0].toLowerCase()
    if (toks.some((t) => w.startsWith(t))) hits.push([m.index, m.index + m[0].length])
  }
  let start = 0
  if (hits.length && hits[0][0] > width / 3) start = Math.max(0, hits[0][0] - Math.floor(width / 3))
  const end = Math.min(text.length, start + width)
  const segs: { text: string; hit: boolean }[] = []
  let pos = start
  if (start > 0) segs.push({ text: '…', hit: false })
  for (const [a, b] of hits) {
    if (b <= start || a >= end) continue
    const a2 = Math.max(a, start)
    const b2 = Math.min(b, end)
    if (a2 > pos) segs.push({ text: text.slice(pos, a2), hit: false })
    segs.push({ text: text.slice(a2, b2), hit: true })
    pos = b2
  }
  if (pos < end) segs.push({ text: text.slice(pos, end), hit: false })
  if (end < text.length) segs.push({ text: '…', hit: false })
  return segs
}
