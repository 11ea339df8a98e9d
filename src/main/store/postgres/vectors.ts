/**
 * The Postgres source's stored vectors: model facts (malformed counted), the VectorIndex read over the wire when nothing is pushed down, the workspace's backfilled vectors, and the SQL for pgvector expressions.
 * Functions over PgCtx (context.ts); PgSource delegates to them.
 */
import type { VectorInfo } from '../../../shared/contract'
import type { EmbeddingModelFacts } from '../../../shared/types'
import { decodeVector } from '../decode'
import { HELD_WORKSPACE, VectorIndex } from '../vectors/vectorIndex'
import { vectorLiteral, NON_FINITE, type PgCtx } from './context'

/**
 * The query as a pgvector literal. Where the store pads its vectors with zeros to one length (Letta), the
 * query is padded the same way: the zeros add nothing to the dot product or the norms, so the cosine is exact.
 */
export function queryLiteral(ctx: PgCtx, v: ArrayLike<number>): string {
  if (!ctx.sql.vectorPadded || !ctx.sql.embeddings) return vectorLiteral(v)
  if (ctx.padLength === null)
    ctx.padLength = Number(
      ctx.q<{ d: number | null }>(`SELECT max(vector_dims(e.vec)) AS d FROM (SELECT e.vec FROM (${ctx.sql.embeddings}) e LIMIT 1) e`)[0]?.d ?? 0,
    )
  if (v.length >= ctx.padLength) return vectorLiteral(v)
  const padded = new Float32Array(ctx.padLength)
  padded.set(v)
  return vectorLiteral(padded)
}

/** A read vector cut back to its model's length (padded layouts); other layouts keep the length check. */
function decodeStored(ctx: PgCtx, raw: unknown, dim: number | null): ReturnType<typeof decodeVector> {
  if (!ctx.sql.vectorPadded || dim === null) return decodeVector(raw, dim)
  const v = decodeVector(raw, null)
  if (typeof v === 'string') return v
  if (v.length < dim) return 'wrongDimension'
  // Past the model's length Letta wrote zeros; anything else there is not this model's vector.
  for (let i = dim; i < v.length; i++) if (v[i] !== 0) return 'wrongDimension'
  return v.subarray(0, dim)
}

/** The vector column as pgvector `vector`. */
export function vecExpr(ctx: PgCtx, a: string): string {
  return ctx.sql.vectorStorage === 'array' ? `${a}.vec::real[]::vector` : `${a}.vec`
}

/**
 * SQL that is true when a stored vector can be compared with the query literal `qv`: the same length
 * (pgvector fails the whole statement on "different vector dimensions"), and for real[] storage finite
 * (its cast to vector refuses NaN and ±Infinity). A row that fails is skipped, as the SQLite source
 * skips it; serverModels counts it as malformed.
 */
export function vecUsable(ctx: PgCtx, a: string, qv: string): string {
  if (ctx.sql.vectorStorage === 'array') return `(cardinality(${a}.vec) = vector_dims(${qv}::vector) AND NOT (${a}.vec::real[] && ${NON_FINITE}))`
  return `(vector_dims(${a}.vec) = vector_dims(${qv}::vector))`
}

/** Models per owner type with their majority dimension (one GROUP BY over the vectors). */
export function vectorModels(ctx: PgCtx): EmbeddingModelFacts[] {
  const wsWrites = ctx.workspace.vectorWrites
  if (ctx.modelsCache && ctx.modelsCache.wsWrites === wsWrites) return ctx.modelsCache.facts
  const facts = serverModels(ctx)
  // Backfilled vectors (the workspace's, for memories the server has no vector of that model for).
  for (const w of ctx.workspace.vectorModels()) {
    const n = backfilled(ctx, w.model, w.ownerType).count
    if (n === 0) continue
    const f = facts.find((x) => x.model === w.model && x.ownerType === w.ownerType)
    if (f) f.backfilled = n
    else facts.push({ model: w.model, ownerType: w.ownerType, dim: w.dim, count: 0, malformed: 0, badShape: 0, backfilled: n })
  }
  ctx.modelsCache = { facts, wsWrites }
  return facts
}

export function serverModels(ctx: PgCtx): EmbeddingModelFacts[] {
  if (ctx.serverModelsCache) return ctx.serverModelsCache.map((f) => ({ ...f }))
  if (!ctx.sql.embeddings) return (ctx.serverModelsCache = [])
  const dimExpr = ctx.sql.vectorPadded
    ? 'e.dim'
    : ctx.sql.vectorStorage === 'vector'
      ? 'vector_dims(e.vec)'
      : ctx.sql.vectorStorage === 'array'
        ? `(CASE WHEN e.vec::real[] && ${NON_FINITE} THEN 0 ELSE cardinality(e.vec) END)`
        : `(CASE WHEN length(e.vec) % 4 = 0 THEN length(e.vec) / 4 ELSE -1 END)`
  const rows = ctx.q<{ o: string; m: string; d: number; n: string }>(
    `SELECT e.owner_type AS o, e.model AS m, ${dimExpr} AS d, count(*) AS n FROM (${ctx.sql.embeddings}) e GROUP BY 1, 2, 3 ORDER BY 4 DESC`,
  )
  const byModel = new Map<string, EmbeddingModelFacts>()
  for (const r of rows) {
    const key = `${r.o}\u0000${r.m}`
    const n = Number(r.n)
    let f = byModel.get(key)
    if (!f) byModel.set(key, (f = { model: r.m, ownerType: r.o === 'session' ? 'session' : 'memory', dim: Number(r.d), count: 0, malformed: 0, badShape: 0 }))
    if (Number(r.d) === f.dim) f.count += n
    else {
      f.malformed += n
      if (Number(r.d) <= 0) f.badShape += n
    }
  }
  ctx.serverModelsCache = [...byModel.values()].filter((f) => f.ownerType === 'memory' || f.ownerType === 'session').sort((a, b) => b.count - a.count)
  return ctx.serverModelsCache.map((f) => ({ ...f }))
}

/**
 * The workspace's backfilled vectors of one model, for ids the server has no vector of that model for (the
 * agent's vector wins, as in the SQLite source). They live on this machine, so the dense arm scans them here
 * and merges them with the pushed-down hits. Reloaded after every workspace vector write.
 */
export function backfilled(ctx: PgCtx, model: string, ownerType: 'memory' | 'session'): VectorIndex {
  const key = `${ownerType}\u0000${model}`
  const wsWrites = ctx.workspace.vectorWrites
  const hit = ctx.backfills.get(key)
  if (hit && hit.wsWrites === wsWrites) return hit.idx
  hit?.idx.reset() // a compact one holds files
  const idx = new VectorIndex(ownerType, model, ctx.workspacePath)
  const rows = ctx.workspace.db
    .prepare(`SELECT owner_id AS id, dim, vector FROM ws_embeddings WHERE owner_type = ? AND model = ? ORDER BY owner_id`)
    .all(ownerType, model) as { id: string; dim: number | null; vector: unknown }[]
  if (rows.length) {
    const onServer = serverHas(
      ctx,
      rows.map((r) => r.id),
      model,
      ownerType,
    )
    for (const r of rows) {
      if (onServer.has(r.id)) continue
      const v = decodeVector(r.vector, idx.dim || r.dim || null)
      if (typeof v === 'string') {
        idx.malformed[v]++
        continue
      }
      if (idx.dim === 0) idx.dim = v.length
      idx.putFrom(r.id, v, 0, idx.count, HELD_WORKSPACE, undefined)
    }
  }
  ctx.backfills.set(key, { idx, wsWrites })
  return idx
}

/** Which of these owners have a vector of this model on the server. */
function serverHas(ctx: PgCtx, ids: string[], model: string, ownerType: 'memory' | 'session'): Set<string> {
  const out = new Set<string>()
  if (!ctx.sql.embeddings || !serverModels(ctx).some((m) => m.model === model && m.ownerType === ownerType)) return out
  for (let i = 0; i < ids.length; i += 5000)
    for (const [id] of ctx.bridge.query<[string]>(
      `SELECT DISTINCT e.owner_id FROM (${ctx.sql.embeddings}) e WHERE e.owner_type = $1 AND e.model = $2 AND e.owner_id = ANY($3::text[])`,
      [ownerType, model, ids.slice(i, i + 5000)],
      { rowMode: 'array' },
    ))
      out.add(String(id))
  return out
}

export function storedModels(ctx: PgCtx, owner: 'memory' | 'session' = 'memory'): string[] {
  return ctx
    .vectorModels()
    .filter((m) => m.ownerType === owner)
    .map((m) => m.model)
}

/** Decode `vec` as sent (text for vector/arrays, bytes for bytea). */
function vecSelect(ctx: PgCtx, a: string): string {
  return ctx.sql.vectorStorage === 'bytea' ? `${a}.vec` : ctx.sql.vectorStorage === 'array' ? `array_to_json(${a}.vec)::text` : `${a}.vec::text`
}

/**
 * The whole index of one model, loaded over the wire (the engine's scan path
 * when the dense arm cannot be pushed down; tools that need every vector).
 */
export function vectors(ctx: PgCtx, model: string, ownerType: 'memory' | 'session' = 'memory'): VectorIndex {
  const key = `${ownerType}\u0000${model}`
  const wsWrites = ctx.workspace.vectorWrites
  const hit = ctx.indexes.get(key)
  if (hit && hit.wsWrites === wsWrites) return hit.idx
  hit?.idx.reset() // a compact one holds files
  const idx = new VectorIndex(ownerType, model, ctx.workspacePath)
  const facts = serverModels(ctx).find((m) => m.model === model && m.ownerType === ownerType)
  if (ctx.sql.embeddings && facts) {
    idx.dim = facts.dim
    idx.reserve(facts.count)
    let last = ''
    for (;;) {
      const rows = ctx.bridge.query<[string, unknown]>(
        `SELECT e.owner_id, ${vecSelect(ctx, 'e')} FROM (${ctx.sql.embeddings}) e WHERE e.owner_type = $1 AND e.model = $2 AND e.owner_id > $3 ORDER BY e.owner_id LIMIT 20000`,
        [ownerType, model, last],
        { rowMode: 'array' },
      )
      for (const [id, raw] of rows) {
        const v = decodeStored(ctx, raw, facts.dim)
        if (typeof v === 'string') {
          idx.malformed[v]++
          continue
        }
        idx.put(String(id), v, idx.count)
      }
      if (rows.length < 20000) break
      last = String(rows[rows.length - 1][0])
    }
  }
  // Then the backfilled vectors of ids the server left without one (marked as the workspace's).
  const ws = backfilled(ctx, model, ownerType)
  if (ws.count > 0 && (idx.dim === 0 || idx.dim === ws.dim)) {
    if (idx.dim === 0) idx.dim = ws.dim
    idx.reserve(idx.count + ws.count)
    for (let r = 0; r < ws.count; r++) idx.putFrom(ws.ids[r], ws.get(ws.ids[r])!, 0, idx.count, HELD_WORKSPACE, idx.rowOf.get(ws.ids[r]))
  }
  ctx.indexes.set(key, { idx, wsWrites })
  return idx
}

export function vectorDataVersion(ctx: PgCtx): string {
  return `pg:${ctx.url.identity}:ws${ctx.workspace.vectorWrites}:${ctx
    .vectorModels()
    .map((m) => `${m.model}=${m.count}`)
    .join(',')}`
}

export function vectorInfo(ctx: PgCtx, ownerId: string, ownerType: 'memory' | 'session' = 'memory'): VectorInfo[] {
  const server = ctx.sql.embeddings
    ? ctx
        .q<{ model: string; v: unknown }>(
          `SELECT e.model, ${vecSelect(ctx, 'e')} AS v FROM (${ctx.sql.embeddings}) e WHERE e.owner_type = $1 AND e.owner_id = $2`,
          [ownerType, ownerId],
        )
        .map((r) => ({ model: r.model, v: r.v, backfilled: false }))
    : []
  // Backfilled vectors (workspace) too, marked, as the SQLite source shows them.
  const ws = ctx.workspace.vectorRows(ownerType, ownerId).map((r) => ({ model: r.model, v: r.vector, backfilled: true }))
  return [...server, ...ws].map((r) => {
    const facts = ctx.vectorModels().find((m) => m.model === r.model && m.ownerType === ownerType)
    const v = r.backfilled ? decodeVector(r.v, facts?.dim ?? null) : decodeStored(ctx, r.v, facts?.dim ?? null)
    const mark = r.backfilled ? { backfilled: true } : {}
    if (typeof v === 'string') return { model: r.model, dim: facts?.dim ?? 0, norm: null, problem: v, preview: [], ...mark }
    let s = 0
    for (const x of v) s += x * x
    return { model: r.model, dim: v.length, norm: Math.sqrt(s), problem: null, preview: Array.from(v.subarray(0, 8)), ...mark }
  })
}

export function reloadVectors(ctx: PgCtx): void {
  ctx.indexes.clear()
  ctx.backfills.clear()
  ctx.modelsCache = null
  ctx.serverModelsCache = null
  ctx.memo.clear()
}
