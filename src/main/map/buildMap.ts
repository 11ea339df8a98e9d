/**
 * The embedding map's data (issue 12): the memories in a recall's scope that
 * have a vector under the recall's model, each marked with what the recall did
 * to it (injected, dropped by which gate) and — for an eval case — whether it is
 * relevant (a relevant memory not injected is "missed"); the query's vector;
 * and the first frame, PCA, computed on a worker thread. Above `cap` points the
 * map is a seeded random sample that always keeps every marked memory, and says
 * so. Reads the store only through MemorySource.
 */
import { armTexts } from '../../shared/cue'
import type { MapData, MapPoint } from '../../shared/map'
import { RecallscopeError } from '../../shared/result'
import { mulberry32 } from '../../shared/random'
import type { Cue, RecallTrace, TraceDropped, TraceResult } from '../../shared/types'
import { createEmbedder, type EmbedderOptions } from '../embed/index'
import { caseConfig } from '../eval/replay'
import { prepareVector, runRecallSync } from '../recall/engine'
import { buildConfig, checkRequirements, defaultEmbedderSpec } from '../recall/request'
import { blendFilter, scopeFilter } from '../recall/scope'
import type { MemorySource } from '../store/source'
import { allocateRows } from './rows'
import { startMapWorker, type MapWorker } from './runMapTask'

export interface MapRequest {
  query: string
  cue: Cue | null
  preset?: string
  config?: unknown
  /** epoch ms; a case's own `now` wins */
  now: number
  embedder: string | null
  embedderOptions: EmbedderOptions
  queryVector: number[] | null
  /** an eval case: its query, scope, time and relevant memories replace the request's */
  caseId?: string
  /** points above this are sampled */
  cap: number
  seed: number
  signal?: AbortSignal
}

/** What UMAP refinement needs later (kept in main, never sent to the renderer). */
export interface MapMatrix {
  data: Float32Array
  n: number
  dim: number
  query: Float32Array | null
  pca: Float32Array
  seed: number
}

/** Scopes are listed up to this many ids (the count says when it was capped). */
const SCOPE_LIST_CAP = 2_000_000
/** Hover text per point: enough to recognise a memory; the full text is one click away. */
const SNIPPET = 160
/**
 * The first frame should come fast (≤ 200 ms for 20,000 points, docs/internals/performance.md): when the top of
 * the spectrum is flat (many topics of similar weight), the exact top-two axes are barely better than any in
 * that span, so stop after a few block iterations and say so (`converged: false`).
 */
export const PCA_MAX_ITERATIONS = 6
/** Axes fit on a seeded sample of this many points (all are projected): the first frame's cost stops growing with the map. */
export const PCA_FIT_ROWS = 1000

/** The map's query, time and config: the request's, or an eval case's (its query, scope, `now` and relevant memories). */
function resolveMapRequest(store: MemorySource, req: MapRequest) {
  let { query, cue, now } = req
  let relevant: Set<string> | null = null
  let caseName: string | null = null
  let built = buildConfig({ preset: req.preset, config: req.config })
  if (req.preset) checkRequirements(req.preset, built.requires, built.config)
  let config = built.config
  if (req.caseId) {
    const c = store.workspace.getCase(req.caseId)
    query = c.query
    cue = c.cue
    now = c.now ?? now
    relevant = new Set(c.relevant.map((r) => r.id))
    caseName = c.name || c.id
    config = caseConfig(config, c)
    built = { ...built, config }
  }
  if (config.unit === 'session') throw new RecallscopeError('BAD_INPUT', "The map shows memories: this config ranks sessions (unit 'session')")
  if (query.trim() === '' && !cue) throw new RecallscopeError('BAD_INPUT', 'A query (or a cue) is required')
  return { query, cue, now, relevant, caseName, preset: built.preset, config }
}

/** Build the map's points and its PCA frame (on a worker thread). */
export async function buildMap(store: MemorySource, req: MapRequest): Promise<{ data: MapData; matrix: MapMatrix }> {
  const t0 = performance.now()
  // The PCA worker starts now: its thread comes up while the recall runs and the rows are gathered.
  const worker = startMapWorker()
  try {
    return await buildWith(store, req, worker, t0)
  } finally {
    worker.close()
  }
}

/** buildMap's work, its PCA on `worker` (already starting). */
async function buildWith(store: MemorySource, req: MapRequest, worker: MapWorker, t0: number): Promise<{ data: MapData; matrix: MapMatrix }> {
  const { query, cue, now, relevant, caseName, preset, config } = resolveMapRequest(store, req)

  // The recall itself, exactly as recall.run runs it, with its query vector kept for the map.
  const embedder = req.queryVector ? null : createEmbedder(req.embedder ?? defaultEmbedderSpec(store, 'memory'), req.embedderOptions)
  const texts = armTexts(query, cue, config.cueUse)
  const prepared = await prepareVector(store, texts.dense, { embedder, queryVector: req.queryVector, signal: req.signal })
  const trace = runRecallSync(store, { text: query, cue }, config, now, { preset, prepared })

  const model = trace.config.model ?? store.storedModels('memory')[0]
  if (!model) throw new RecallscopeError('BAD_INPUT', 'This DB has no memory vectors: backfill embeddings first (the map lays out stored vectors)')
  const index = store.vectors(model, 'memory')
  if (index.count === 0) throw new RecallscopeError('BAD_INPUT', `No memory vectors under "${model}": backfill embeddings first`)
  const dim = index.dim

  // The scope (and Engram's user blend), in storage order; then those with a vector.
  const f = scopeFilter(config.scope, now)
  const scoped = store.idsWhere(f, SCOPE_LIST_CAP)
  const blend = blendFilter(config.scope, now)
  const ids = blend ? [...new Set([...scoped, ...store.idsWhere(blend, SCOPE_LIST_CAP)])] : scoped
  const inScopeCapped = scoped.length >= SCOPE_LIST_CAP
  const withVector = ids.filter((id) => index.rowOf.has(id))

  const injected = new Map(trace.results.map((r) => [r.id, r]))
  const dropped = new Map(trace.dropped.map((d) => [d.id, d]))
  const marked = (id: string) => injected.has(id) || dropped.has(id) || (relevant?.has(id) ?? false)
  const sampled = withVector.length > req.cap
  const chosen = sampled ? sample(withVector, req.cap, marked, req.seed) : withVector

  const n = chosen.length
  // Over shared memory: the PCA and UMAP workers (and the layout's helper threads) read the rows in place instead of
  // each receiving a copy (61 MB at 20,000 × 768, tens of ms to clone on the way to every worker).
  const { data, memory } = allocateRows(n, dim)
  for (let i = 0; i < n; i++) {
    const row = index.rowOf.get(chosen[i])!
    data.set(index.rowVector(row), i * dim)
  }
  const qv = queryVector(prepared.vector, dim)
  const queryNote = qv
    ? null
    : prepared.vector
      ? `The query vector has ${prepared.vector.length} dimensions, the map's model ${dim}: not placed`
      : `No query vector (${prepared.reason ?? trace.degradedReason ?? 'dense arm off'}): not placed`

  const points = mapPoints(store, chosen, data, dim, qv, trace, { injected, dropped, relevant })
  const onMap = new Set(chosen)
  const gatherMs = performance.now() - t0

  const t1 = performance.now()
  const pca =
    n > 0
      ? await worker.run(
          { task: 'pca', data, memory, n, dim, query: qv, seed: req.seed, maxIterations: PCA_MAX_ITERATIONS, fitRows: PCA_FIT_ROWS },
          { signal: req.signal },
        )
      : null
  const pcaMs = performance.now() - t1

  const relevantIds = relevant ? [...relevant] : []
  const result: MapData = {
    model,
    dim,
    query,
    cue,
    now,
    preset,
    caseId: req.caseId ?? null,
    caseName,
    embedder: trace.embedder,
    inScope: ids.length,
    inScopeCapped,
    withVector: withVector.length,
    shown: n,
    sampled,
    cap: req.cap,
    seed: req.seed,
    points,
    pca: {
      coords: pca ? Array.from(pca.coords) : [],
      query: pca?.query ?? null,
      explained: pca && pca.totalVariance > 0 ? [pca.variance[0] / pca.totalVariance, pca.variance[1] / pca.totalVariance] : [0, 0],
      iterations: pca?.iterations ?? 0,
      converged: pca?.converged ?? true,
    },
    queryNote,
    counts: {
      injected: trace.results.length,
      injectedOnMap: trace.results.filter((r) => onMap.has(r.id)).length,
      dropped: trace.dropped.length,
      droppedOnMap: trace.dropped.filter((d) => onMap.has(d.id)).length,
      relevant: relevantIds.length,
      relevantOnMap: relevantIds.filter((id) => onMap.has(id)).length,
      missed: relevantIds.filter((id) => !injected.has(id)).length,
    },
    timings: { gatherMs, pcaMs },
    mapId: '',
  }
  return { data: result, matrix: { data, n, dim, query: qv, pca: pca?.coords ?? new Float32Array(0), seed: req.seed } }
}

/** One point per chosen memory: its snippet, its similarity to the query and its mark (injected / dropped, relevant). */
function mapPoints(
  store: MemorySource,
  chosen: string[],
  data: Float32Array,
  dim: number,
  qv: Float32Array | null,
  trace: RecallTrace,
  marks: { injected: Map<string, TraceResult>; dropped: Map<string, TraceDropped>; relevant: Set<string> | null },
): MapPoint[] {
  const { injected, dropped, relevant } = marks
  const mems = store.getMemories(chosen)
  return chosen.map((id, i) => {
    const m = mems.get(id)
    const text = m?.content ?? trace.units[id]?.content ?? ''
    let similarity: number | null = null
    if (qv) {
      let s = 0
      for (let j = 0; j < dim; j++) s += data[i * dim + j] * qv[j]
      similarity = s
    }
    const p: MapPoint = { id, text: text.length > SNIPPET ? `${text.slice(0, SNIPPET - 1)}…` : text, kind: m?.kind ?? null, mark: 'none', similarity }
    const r = injected.get(id)
    const d = dropped.get(id)
    if (r) Object.assign(p, { mark: 'injected', rank: r.rank, score: r.score, features: r.features, contributions: r.contributions })
    else if (d) Object.assign(p, { mark: 'dropped', gate: d.gate, score: d.score, features: d.features, contributions: d.contributions })
    if (relevant) p.relevant = relevant.has(id)
    return p
  })
}

/** The query vector as unit-length float32 of the map's dimension (the index's rows are unit length), else null. */
function queryVector(v: ArrayLike<number> | null, dim: number): Float32Array | null {
  if (!v || v.length !== dim) return null
  let s = 0
  for (let j = 0; j < dim; j++) s += v[j] * v[j]
  const norm = Math.sqrt(s)
  if (!(norm > 0) || !Number.isFinite(norm)) return null
  const out = new Float32Array(dim)
  for (let j = 0; j < dim; j++) out[j] = v[j] / norm
  return out
}

/**
 * `cap` of `ids`: every marked one (up to the cap), the rest a seeded uniform
 * sample of the others; storage order kept, so the same seed gives the same map.
 */
function sample(ids: string[], cap: number, marked: (id: string) => boolean, seed: number): string[] {
  const keep = new Uint8Array(ids.length)
  let left = cap
  const others: number[] = []
  for (let i = 0; i < ids.length; i++) {
    if (marked(ids[i]) && left > 0) {
      keep[i] = 1
      left--
    } else others.push(i)
  }
  // Partial Fisher–Yates: the first `left` slots become a uniform sample of the others.
  const rand = mulberry32(seed)
  for (let k = 0; k < left && k < others.length; k++) {
    const j = k + Math.floor(rand() * (others.length - k))
    const t = others[k]
    others[k] = others[j]
    others[j] = t
    keep[others[k]] = 1
  }
  return ids.filter((_, i) => keep[i] === 1)
}
