/**
 * What a SQLite store holds, for the Library and `info`: breakdowns by agent /
 * user / kind / tier / role, time range, malformed rows, vector models. One
 * indexed query per breakdown, cached in the workspace under the file's
 * signature so reopening an unchanged DB costs nothing.
 */
import fs from 'node:fs'
import type { Facets } from '../../../shared/contract'
import type { DbFacts, MalformedCounts } from '../../../shared/types'
import { MAX_DATE_MS, toMs, cellText } from '../decode'
import type { SqliteCtx } from './context'
import type { SqliteVectors } from './vectors'

interface Summary {
  byAgent: { key: string; count: number }[]
  byUser: { key: string; count: number }[]
  byKind: { key: string; count: number }[]
  byTier: { key: string; count: number }[]
  byRole: { key: string; count: number }[]
  badMetadata: number
  badTimestamp: number
  memories: number
  timeRange: { min: number; max: number } | null
}

/**
 * A cheap fingerprint of the agent DB's content: row counts, max rowid, and the
 * size/mtime of the file and its WAL. Expensive summaries are cached under it.
 * Computed once per data version (`ctx.memo()`: any commit starts a new one): every recall asks
 * for it (the store's capabilities list its vector models), and at a million rows the count
 * alone takes tens of ms (docs/internals/performance.md, "lexicalapp").
 */
export function contentSignature(ctx: SqliteCtx): string {
  const memo = ctx.memo().scopes
  const hit = memo.get(SIGNATURE_KEY)
  if (typeof hit === 'string') return hit
  const stat = (p: string) => {
    try {
      const st = fs.statSync(p)
      return `${st.size}:${st.mtimeMs}`
    } catch {
      return '-'
    }
  }
  // Two queries: count(*) reads the smallest index and max(_rid) one B-tree edge; asked together,
  // SQLite scans the table itself (0.17 s vs 0.04 s at a million rows).
  const n = ctx.db.prepare(`SELECT count(*) FROM (${ctx.sql.memoriesLite})`).pluck().get() as number
  const r = ctx.db.prepare(`SELECT max(_rid) FROM (${ctx.sql.memoriesLite})`).pluck().get() as number | null
  const sig = `${ctx.sql.layout}|${n}|${r}|${stat(ctx.path)}|${ctx.fileBacked ? stat(`${ctx.path}-wal`) : 'materialized'}${ctx.sql.ftsKey ? `|${ctx.sql.ftsKey}` : ''}`
  memo.set(SIGNATURE_KEY, sig)
  return sig
}

/** contentSignature's entry in the per-version memo (scope keys start with `rows|` or `count|`). */
const SIGNATURE_KEY = 'contentSignature'

function summary(ctx: SqliteCtx): Summary {
  return ctx.cached('summary:v2', () => {
    const src = ctx.sql.memoriesLite
    const tally = (col: string) =>
      (ctx.db.prepare(`SELECT ${col} AS k, count(*) AS n FROM (${src}) GROUP BY 1`).all() as { k: unknown; n: number }[])
        .map((r) => ({ key: r.k === null ? '(none)' : cellText(r.k), count: r.n }))
        .sort((x, y) => y.count - x.count || x.key.localeCompare(y.key))
    const byAgent = tally('agent_id')
    // a number outside Date's range is unreadable (decode.toMs): counted, and kept out of the range
    const outside = (col: string) => `(typeof(${col}) IN ('integer', 'real') AND abs(${col}) > ${MAX_DATE_MS})`
    const tr = ctx.db.prepare(`SELECT min(created_at) AS mn, max(created_at) AS mx FROM (${src}) WHERE NOT ${outside('created_at')}`).get() as {
      mn: unknown
      mx: unknown
    }
    const badTimestamp = ctx.db
      .prepare(`SELECT count(*) FROM (${src}) WHERE ${outside('created_at')} OR ${outside('last_used_at')}`)
      .pluck()
      .get() as number
    const mn = toMs(tr.mn)
    const mx = toMs(tr.mx)
    return {
      byAgent,
      byUser: tally('user_id'),
      byKind: tally('kind'),
      byTier: tally('tier'),
      byRole: tally('role'),
      badMetadata: ctx.db.prepare(`SELECT count(*) FROM (${src}) WHERE metadata IS NOT NULL AND NOT json_valid(metadata)`).pluck().get() as number,
      badTimestamp,
      memories: byAgent.reduce((n, x) => n + x.count, 0),
      timeRange: mn !== null && mx !== null ? { min: mn, max: mx } : null,
    }
  })
}

export function facts(ctx: SqliteCtx, vectors: SqliteVectors, evalCases: number): DbFacts {
  const t0 = performance.now()
  const sum = summary(ctx)
  const known = (list: { key: string; count: number }[], ok: readonly string[]) =>
    list.filter((x) => x.key !== '(none)' && !ok.includes(x.key)).reduce((n, x) => n + x.count, 0)
  const malformed: MalformedCounts = {
    ...ctx.malformed,
    badMetadata: sum.badMetadata,
    unknownRole: known(sum.byRole, ['user', 'assistant', 'system', 'tool']),
    unknownKind: known(sum.byKind, ['episodic', 'semantic', 'procedural', 'reflection']),
    unknownTier: known(sum.byTier, ['working', 'long_term', 'archived']),
    badTimestamp: sum.badTimestamp,
  }
  // A full pass over the vectors table: cached separately so facets never wait for it.
  const models = vectors.vectorModels()
  // Shape problems are visible from SQL alone; NaN/Infinity only once a model's vectors are loaded.
  let badShape = 0
  let wrongDim = 0
  let loadedBad = 0
  let loadedWrong = 0
  for (const m of models) {
    badShape += m.badShape ?? 0
    wrongDim += m.malformed - (m.badShape ?? 0)
  }
  for (const idx of vectors.indexes.values()) {
    loadedBad += idx.malformed.badVectorShape
    loadedWrong += idx.malformed.wrongDimension
    malformed.nonFiniteVector += idx.malformed.nonFiniteVector
  }
  malformed.badVectorShape = Math.max(badShape, loadedBad)
  malformed.wrongDimension = Math.max(wrongDim, loadedWrong)
  const sessions = ctx.db.prepare(`SELECT count(*) FROM (${ctx.sql.sessions})`).pluck().get() as number
  const embeddings = models.reduce((n, m) => n + m.count, 0)
  const recallEvents = ctx.sql.recallEvents ? (ctx.db.prepare(`SELECT count(*) FROM (${ctx.sql.recallEvents})`).pluck().get() as number) : 0
  let sizeBytes = 0
  try {
    sizeBytes = fs.statSync(ctx.path).size
  } catch {
    /* deleted under us: report 0 */
  }
  return {
    path: ctx.path,
    layout: ctx.sql.layout,
    detectedBecause: ctx.sql.detectedBecause ?? null,
    readOnly: ctx.readOnly,
    workspacePath: ctx.workspacePath,
    sizeBytes,
    counts: { memories: sum.memories, sessions, embeddings, recallEvents, evalCases },
    byAgent: sum.byAgent,
    byUser: sum.byUser,
    byKind: sum.byKind,
    byTier: sum.byTier,
    byRole: sum.byRole,
    models,
    timeRange: sum.timeRange,
    malformed,
    hasFts: ctx.sql.agentFts ? 'agent' : ctx.wsFtsReady() ? 'workspace' : 'none',
    tookMs: performance.now() - t0,
  }
}

/** Distinct values for the browser's facets (from the cached summary). */
export function facets(ctx: SqliteCtx): Facets {
  const sum = summary(ctx)
  const keys = (xs: { key: string }[]) =>
    xs
      .map((x) => x.key)
      .filter((k) => k !== '(none)')
      .sort()
      .slice(0, 500)
  return {
    agents: keys(sum.byAgent),
    users: keys(sum.byUser),
    kinds: keys(sum.byKind),
    tiers: keys(sum.byTier),
    roles: keys(sum.byRole),
    timeRange: sum.timeRange,
  }
}

/** Small counts for the app's header without the full facts. */
export function quickCounts(ctx: SqliteCtx): { memories: number; sessions: number } {
  return {
    memories: ctx.db.prepare(`SELECT count(*) FROM (${ctx.sql.memoriesLite})`).pluck().get() as number,
    sessions: ctx.db.prepare(`SELECT count(*) FROM (${ctx.sql.sessions})`).pluck().get() as number,
  }
}
