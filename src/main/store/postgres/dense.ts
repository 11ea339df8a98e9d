/**
 * The Postgres source's dense arm pushed down to pgvector (exact, or HNSW / IVFFlat when the URL asks), merged with backfilled vectors scanned here; similarities of given owners.
 * Functions over PgCtx (context.ts); PgSource delegates to them.
 */
import { RecallscopeError } from '../../../shared/result'
import type { DenseSearchRequest, DenseSearchResult, MemoryFilter } from '../source'
import { VectorIndex } from '../vectors/vectorIndex'
import { ident } from './layouts'
import { memoryWhere, Params } from './where'
import { type PgCtx } from './context'
import { backfilled, queryLiteral, serverModels, vecExpr, vecUsable } from './vectors'

/** The exact top-N in-scope rows by cosine, computed in Postgres (see the header). */
export function denseSearch(ctx: PgCtx, req: DenseSearchRequest): DenseSearchResult {
  if (!ctx.pushdownReady || !ctx.sql.embeddings) throw new RecallscopeError('INTERNAL', 'dense search push-down is not available for this store')
  const ps = new Params()
  const qv = ps.p(queryLiteral(ctx, req.vector))
  const model = ps.p(req.model)
  const where = memoryWhere(req.filter, ps, ctx.sql.embeddings)
  const n = ps.p(Math.max(0, Math.floor(req.limit)))
  const v = vecExpr(ctx, 'e')
  const method = ctx.denseMethod
  const ws = req.ownerType === 'memory' ? backfilled(ctx, req.model, 'memory') : null
  if (ws && ws.count > 0 && req.missingZero) return denseSearchLocal(ctx, req)
  const onServer = serverModels(ctx).some((m) => m.model === req.model && m.ownerType === req.ownerType)
  let rows: [string, number | null][]
  if (!onServer) {
    rows = []
  } else if (req.ownerType === 'session') {
    throw new RecallscopeError('INTERNAL', 'session-unit dense search uses similarities()')
  } else if (req.missingZero) {
    rows = ctx.bridge.query<[string, number | null]>(
      `SELECT d.id, d.sim FROM (SELECT m.id, (1 - (${v} <=> ${qv}::vector))::float8 AS sim FROM (${ctx.sql.memories}) m
         LEFT JOIN (${ctx.sql.embeddings}) e ON e.owner_type = 'memory' AND e.model = ${model} AND e.owner_id = m.id AND ${vecUsable(ctx, 'e', qv)}
         WHERE ${where} OFFSET 0) d
       ORDER BY coalesce(d.sim, 0) DESC, (d.sim IS NULL), d.id LIMIT ${n}`,
      ps.values,
      { rowMode: 'array' },
    )
  } else if (method === 'exact') {
    // OFFSET 0 fences the subquery: every in-scope distance is computed before the sort, so no ANN index can answer instead (exact).
    rows = ctx.bridge.query<[string, number]>(
      `SELECT d.id, (1 - d.dist)::float8 AS sim FROM (SELECT m.id, (${v} <=> ${qv}::vector) AS dist FROM (${ctx.sql.memories}) m
         JOIN (${ctx.sql.embeddings}) e ON e.owner_type = 'memory' AND e.model = ${model} AND e.owner_id = m.id AND ${vecUsable(ctx, 'e', qv)}
         WHERE ${where} OFFSET 0) d
       ORDER BY d.dist ASC, d.id ASC LIMIT ${n}`,
      ps.values,
      { rowMode: 'array' },
    )
  } else {
    // ANN: the index scan needs `ORDER BY <column> <=> $q` on the table itself, so the nearest rows of the model are read
    // first (at most ef_search / probes-limited by the index), then the scope filters them: a selective scope may get fewer.
    const set = method === 'hnsw' ? `SET hnsw.ef_search = ${ctx.annEf}` : `SET ivfflat.probes = ${ctx.annProbes}`
    const vt = ctx.sql.vectorTable!
    const col = `e.${ident(vt.column)}`
    const fetch = ps.p(Math.max(Math.floor(req.limit), method === 'hnsw' ? ctx.annEf : Math.floor(req.limit)))
    // The inner query has no WHERE, so the only way to serve its ORDER BY … LIMIT is the ANN index (a btree on the
    // other columns cannot); rows of other models among those nearest are dropped by the outer filter.
    const annSql = `SELECT c.id, (1 - c.dist)::float8 AS sim FROM (SELECT ${vt.id} AS id, ${vt.ownerType} AS owner_type, ${vt.model} AS model, (${col} <=> ${qv}::vector) AS dist
        FROM ${ident(ctx.sql.schema)}.${ident(vt.table)} e ORDER BY ${col} <=> ${qv}::vector LIMIT ${fetch}) c
      JOIN (${ctx.sql.memories}) m ON m.id = c.id WHERE c.owner_type = 'memory' AND c.model = ${model} AND ${where} ORDER BY c.dist ASC, c.id ASC LIMIT ${n}`
    // The user asked for ANN: steer the planner off the sequential scan for this statement only (set back after).
    const steer = [{ sql: set }, { sql: 'SET enable_seqscan = off' }]
    const unsteer = { sql: 'SET enable_seqscan = on' }
    if (ctx.annIndexUsed === null) {
      // Once per source: does the plan really use the index? The trace must not claim an ANN search that did not run.
      const plan = ctx.bridge.run<{ 'QUERY PLAN': unknown }>([
        ...steer,
        { sql: `EXPLAIN (FORMAT JSON) ${annSql}`, params: ps.values, result: true },
        unsteer,
      ]).rows
      ctx.annIndexUsed = JSON.stringify(plan).includes(ctx.annIndex?.name ?? '\u0000')
    }
    rows = ctx.bridge.run<[string, number]>([...steer, { sql: annSql, params: ps.values, result: true }, unsteer], { rowMode: 'array' }).rows
  }
  const c = ctx.countScope(req.filter)
  let hits = rows.map(([id, sim]) => ({ id: String(id), similarity: sim === null ? null : Number(sim) }))
  if (ws && ws.count > 0) {
    // Backfilled vectors of ids the server has none for: the in-scope ones scanned here, merged by the same
    // order as the database's (similarity desc, id asc); the two sets are disjoint, so the top n of the union is exact.
    const local = scanBackfilled(ctx, ws, req.vector, inScopeOf(ctx, ws.ids.slice(0, ws.count), req.filter), Math.floor(req.limit))
    hits = [...hits, ...local]
      .sort((a, b) => b.similarity! - a.similarity! || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
      .slice(0, Math.max(0, Math.floor(req.limit)))
  }
  return {
    hits,
    exhausted: hits.length < req.limit,
    inScope: c.count,
    inScopeCapped: c.capped,
    method:
      method === 'exact'
        ? { kind: 'exact' }
        : method === 'hnsw'
          ? { kind: 'hnsw', index: ctx.annIndex?.name, efSearch: ctx.annEf, indexUsed: ctx.annIndexUsed === true }
          : { kind: 'ivfflat', index: ctx.annIndex?.name, probes: ctx.annProbes, indexUsed: ctx.annIndexUsed === true },
  }
}

/** Which of these ids are in the scope (asked of the server, 5,000 at a time). */
function inScopeOf(ctx: PgCtx, ids: string[], f: MemoryFilter): Set<string> {
  const out = new Set<string>()
  for (let i = 0; i < ids.length; i += 5000) {
    const ps = new Params()
    const where = memoryWhere(f, ps, ctx.sql.embeddings)
    const idp = ps.p(ids.slice(i, i + 5000))
    for (const [id] of ctx.bridge.query<[string]>(`SELECT m.id FROM (${ctx.sql.memories}) m WHERE m.id = ANY(${idp}::text[]) AND ${where}`, ps.values, {
      rowMode: 'array',
    }))
      out.add(String(id))
  }
  return out
}

/** Cosine of the query with each kept row of a (normalised) index, best first, ties by id; at most n. */
function scanBackfilled(ctx: PgCtx, idx: VectorIndex, query: ArrayLike<number>, keep: Set<string>, n: number): { id: string; similarity: number }[] {
  let qq = 0
  for (let i = 0; i < query.length; i++) qq += query[i] * query[i]
  const inv = qq > 0 ? 1 / Math.sqrt(qq) : 0
  const out: { id: string; similarity: number }[] = []
  for (let r = 0; r < idx.count; r++) {
    const id = idx.ids[r]
    if (!keep.has(id)) continue
    const v = idx.get(id)!
    let dot = 0
    for (let i = 0; i < v.length; i++) dot += v[i] * query[i]
    out.push({ id, similarity: dot * inv })
  }
  return out.sort((a, b) => b.similarity - a.similarity || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)).slice(0, Math.max(0, n))
}

/**
 * missingVector = zero with backfilled vectors: every in-scope row counts (a row without a vector scores 0),
 * so the model's whole index (server + workspace) is scanned here, in the database's order for that mode.
 */
function denseSearchLocal(ctx: PgCtx, req: DenseSearchRequest): DenseSearchResult {
  const idx = ctx.vectors(req.model, 'memory')
  const ids = ctx.idsWhere(req.filter)
  const keep = new Set(ids.filter((id) => idx.rowOf.has(id)))
  const scored = scanBackfilled(ctx, idx, req.vector, keep, keep.size)
  const sim = new Map(scored.map((h) => [h.id, h.similarity]))
  const all = ids.map((id) => ({ id, similarity: sim.has(id) ? sim.get(id)! : null }))
  all.sort(
    (a, b) =>
      (b.similarity ?? 0) - (a.similarity ?? 0) || Number(a.similarity === null) - Number(b.similarity === null) || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0),
  )
  const hits = all.slice(0, Math.max(0, Math.floor(req.limit)))
  const c = ctx.countScope(req.filter)
  return { hits, exhausted: hits.length < req.limit, inScope: c.count, inScopeCapped: c.capped, method: { kind: 'exact' } }
}

/** Cosine similarity (1 − pgvector's cosine distance) of these owners' vectors; ids without one are absent. */
export function similarities(
  ctx: PgCtx,
  ids: string[],
  vector: ArrayLike<number>,
  model: string,
  ownerType: 'memory' | 'session' = 'memory',
): Map<string, number> {
  const out = new Map<string, number>()
  if (ids.length === 0 || !ctx.sql.embeddings) return out
  for (let i = 0; i < ids.length; i += 5000) {
    const rows = ctx.bridge.query<[string, number]>(
      `SELECT e.owner_id, (1 - (${vecExpr(ctx, 'e')} <=> $1::vector))::float8 FROM (${ctx.sql.embeddings}) e
         WHERE e.owner_type = $2 AND e.model = $3 AND e.owner_id = ANY($4::text[]) AND ${vecUsable(ctx, 'e', '$1')}`,
      [queryLiteral(ctx, vector), ownerType, model, ids.slice(i, i + 5000)],
      { rowMode: 'array' },
    )
    for (const [id, s] of rows) out.set(String(id), Number(s))
  }
  const ws = backfilled(ctx, model, ownerType)
  if (ws.count > 0) {
    const missing = new Set(ids.filter((id) => !out.has(id) && ws.rowOf.has(id)))
    for (const h of scanBackfilled(ctx, ws, vector, missing, missing.size)) out.set(h.id, h.similarity)
  }
  return out
}
