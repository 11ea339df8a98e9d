/**
 * The recall engine: (store snapshot, query, config, now) → a trace of every
 * candidate, kept or dropped, with its features, contributions and the gate
 * that removed it (docs/internals/design.md "Recall engine").
 *
 * Pure in the sense that matters for replay: no hidden clock (`now` is an
 * argument; timings are measurements only), no global state, no electron. The
 * only async step is embedding the query; `runRecallSync` takes the vector (or
 * its absence) and does everything else synchronously (demo events use it).
 *
 * Arms (each fetched deeper than the pool, so the renderer can move the pool
 * and switch dense/lexical/hybrid without a round trip — scoring.ts):
 *  - dense   cosine vs stored vectors of the query's model (dense.ts);
 *  - lexical FTS5 bm25 over the raw utterance. lexical = −bm25 / max(−bm25),
 *            the max taken over the query's matches in scope (FTS5's bm25 is
 *            negative for a match, lower = better; the best match scores 1);
 *  - recency the most recent N (recency mode);
 *  - order   one session in turn order (session mode) or Engram's keyword
 *            fallback, newest first (keyword mode).
 * Every feature is measured for every candidate whichever arm found it: cosine
 * for lexical-only hits from their stored vectors, bm25 for dense-only hits.
 *
 * The two gatherers (memory units: gatherMemories.ts, session units: gatherSessions.ts) share
 * the draft/arm state of draft.ts; this file resolves the query vector and the model, runs one
 * of them and turns what it gathered into a trace.
 */
import { armTexts } from '../../shared/cue'
import { explainEmpty } from '../../shared/explainEmpty'
import { renderResults } from '../../shared/render'
import { RecallscopeError } from '../../shared/result'
import { rerank } from '../../shared/scoring'
import type { ArmInfo, CandidateRaw, Cue, EffectiveMode, EmbedderInfo, RecallConfig, RecallTrace } from '../../shared/types'
import { embedQueriesOrDegrade, embedQueryOrDegrade, type QueryEmbedding } from '../embed/cache'
import type { Embedder } from '../embed/types'
import type { MemorySource } from '../store/source'
import type { VectorIndex } from '../store/vectors/vectorIndex'
import { isUnlabelledModel } from './models'
import { normalizeQuery } from './dense'
import type { GatherInput, Gathered, PushedModel } from './draft'
import { gatherMemories, gatherMemoriesBatch, zeroPhaseMs, type GatherPhaseMs } from './gatherMemories'
import { PassReads } from './passReads'
import { gatherSessions } from './gatherSessions'

export interface RecallQuery {
  /** The raw utterance (lexical arm; dense arm too unless a cue is used). */
  text: string
  /** Seed 003 cue: the dense arm embeds buildCue(cue) when config.cueUse.dense = 'cue'. */
  cue?: Cue | null
}

export interface RecallOptions {
  /** Preset name recorded in the trace. */
  preset?: string | null
  /** Embeds the query (cached in the workspace DB). Ignored when `queryVector` is given. */
  embedder?: Embedder | null
  /** An explicit query vector: replaces the embedder (`--query-vector`). */
  queryVector?: ArrayLike<number> | null
  /** Abort a slow embedding call. */
  signal?: AbortSignal
}

/** The query vector (or why there is none), decided before the synchronous part. */
export interface PreparedVector {
  vector: ArrayLike<number> | null
  embedder: EmbedderInfo
  /** why there is no vector (embedder none / failed, empty text) */
  reason: string | null
  embedMs: number
}

/** Pool depth fetched per arm: at least the pool, at least 100 (room for the renderer's slider). */
export function fetchDepth(pool: number): number {
  return Math.min(100_000, Math.max(pool, 100))
}

function toQuery(q: string | RecallQuery): RecallQuery {
  return typeof q === 'string' ? { text: q, cue: null } : { text: q.text ?? '', cue: q.cue ?? null }
}

/** Embed the dense arm's text, degrading (never throwing) when the embedder is off or down (seeds 002, 004). */
export async function prepareVector(store: MemorySource, denseText: string, opts: RecallOptions): Promise<PreparedVector> {
  return (
    preparedWithoutEmbedding(denseText, opts) ??
    preparedFrom(opts.embedder!, await embedQueryOrDegrade(store.workspace, opts.embedder!, denseText, { signal: opts.signal }))
  )
}

/**
 * prepareVector for many dense texts (an eval's queries), each answer the same: the embedder's
 * part in batches (one cache read, one embedder call per batch: embedQueriesOrDegrade).
 */
export async function prepareVectors(
  store: MemorySource,
  denseTexts: readonly string[],
  opts: RecallOptions & { onBatch?: (done: number, total: number) => void },
): Promise<PreparedVector[]> {
  const out: (PreparedVector | null)[] = denseTexts.map((t) => preparedWithoutEmbedding(t, opts))
  const todo: number[] = []
  out.forEach((p, i) => {
    if (!p) todo.push(i)
  })
  if (todo.length) {
    const e = opts.embedder!
    const got = await embedQueriesOrDegrade(
      store.workspace,
      e,
      todo.map((i) => denseTexts[i]),
      { signal: opts.signal, onBatch: opts.onBatch },
    )
    todo.forEach((i, j) => (out[i] = preparedFrom(e, got[j])))
  }
  return out as PreparedVector[]
}

/** The prepared vector when no embedding is needed (an explicit vector, no or a disabled embedder, empty text); null: embed. */
function preparedWithoutEmbedding(denseText: string, opts: RecallOptions): PreparedVector | null {
  if (opts.queryVector) return { vector: opts.queryVector, embedder: { name: 'vector', model: null, available: true }, reason: null, embedMs: 0 }
  const e = opts.embedder
  if (!e) return { vector: null, embedder: { name: 'none', model: null, available: false }, reason: 'no embedder: the dense arm is off', embedMs: 0 }
  const info: EmbedderInfo = { name: e.name, model: e.model, available: e.enabled }
  if (!e.enabled) return { vector: null, embedder: info, reason: `embedder "${e.name}": the dense arm is off`, embedMs: 0 }
  if (denseText.trim() === '') return { vector: null, embedder: info, reason: 'empty query: nothing to embed', embedMs: 0 }
  return null
}

function preparedFrom(e: Embedder, r: QueryEmbedding): PreparedVector {
  return {
    vector: r.vector,
    embedder: { name: e.name, model: e.model, available: r.vector !== null },
    reason: r.vector ? null : `embedder ${e.name}${e.model ? `:${e.model}` : ''} unavailable: ${r.reason ?? 'no vector'}`,
    embedMs: r.tookMs,
  }
}

/**
 * Run one recall. `now` is explicit (epoch ms): rows created after it are out of
 * scope and a last use after it counts as none, so a logged event replays at its own time.
 */
export async function runRecall(
  store: MemorySource,
  query: string | RecallQuery,
  config: RecallConfig,
  now: number,
  opts: RecallOptions = {},
): Promise<RecallTrace> {
  const t0 = performance.now()
  const cfg = config
  const q = toQuery(query)
  const texts = armTexts(q.text, q.cue, cfg.cueUse)
  const prepared = await prepareVector(store, texts.dense, opts)
  return runRecallSync(store, q, cfg, now, { preset: opts.preset, prepared, startedAt: t0 })
}

export interface SyncOptions {
  preset?: string | null
  prepared: PreparedVector
  /** performance.now() at the start (for totalMs). */
  startedAt?: number
  /**
   * Ranked candidates fetched per arm (≥ candidatePool). Results do not depend on it;
   * only how far the renderer can move the pool locally. @default fetchDepth(candidatePool)
   */
  depth?: number
  /** Where vector indexes come from. @default store.vectors (re-checks the DB for new rows on every call) */
  vectors?: (model: string, owner: 'memory' | 'session') => VectorIndex
  /** The gather's store reads, shared with other recalls of the same pass. @default new ones for this recall */
  reads?: PassReads
}

/** What one engine run gathered, before any scoring: the part of a trace an eval keeps (replay.ts). */
export interface GatheredRecall {
  /** the config it ran with */
  config: RecallConfig
  embedder: EmbedderInfo
  candidates: CandidateRaw[]
  arms: { dense: ArmInfo; lexical: ArmInfo; recency: ArmInfo; order: ArmInfo }
  mode: EffectiveMode
  /** dense or hybrid mode without a dense arm */
  degraded: boolean
}

/**
 * The candidates and arms of one recall without re-ranking, rendering or the units' display
 * records: eval gathers keep only these (a trace's other parts are re-derived by the shared
 * `rerank`), and building them for 999 cases cost about a tenth of a cold eval.
 * Same candidates as `runRecallSync`, number for number.
 */
export function gatherRecallSync(store: MemorySource, query: string | RecallQuery, config: RecallConfig, now: number, opts: SyncOptions): GatheredRecall {
  const { cfg, embedder, g } = gatherSync(store, query, config, now, opts, false)
  return { config: cfg, embedder, candidates: g.candidates, arms: g.arms, mode: g.mode, degraded: isDegraded(cfg, g) }
}

/** One recall of a batch (an eval case): its query, config (the case's scope applied), moment and query vector. */
export interface BatchRecall {
  query: RecallQuery
  config: RecallConfig
  now: number
  prepared: PreparedVector
}

/**
 * Gather many recalls together (an eval's cases), each as `gatherRecallSync` would, number for
 * number: every arm and feature phase runs over all of them in turn (gatherMemoriesBatch), and
 * the store is asked each scope, count, model and row once for the batch (`reads`, which the
 * caller may share across batches of one pass). `ms` accumulates where the time went.
 */
export function gatherRecallBatch(reads: PassReads, items: readonly BatchRecall[], opts: { depth?: number; ms?: GatherPhaseMs } = {}): GatheredRecall[] {
  const resolved = items.map((it) => resolveGather(reads, it.query, it.config, it.now, { prepared: it.prepared, depth: opts.depth }, false))
  const ms = opts.ms ?? zeroPhaseMs()
  const memories = gatherMemoriesBatch(
    resolved.filter((r) => r.cfg.unit !== 'session').map((r) => r.input),
    ms,
  )
  let next = 0
  return resolved.map((r) => {
    let g: Gathered
    if (r.cfg.unit === 'session') {
      const t0 = performance.now()
      g = gatherSessions(r.input)
      ms.denseMs += g.denseMs
      ms.lexicalMs += g.lexicalMs
      ms.featuresMs += performance.now() - t0 - g.denseMs - g.lexicalMs
    } else g = memories[next++]
    noteUnlabelled(g, r.unlabelledNote)
    return { config: r.cfg, embedder: r.embedder, candidates: g.candidates, arms: g.arms, mode: g.mode, degraded: isDegraded(r.cfg, g) }
  })
}

function isDegraded(cfg: RecallConfig, g: Gathered): boolean {
  return (cfg.mode === 'dense' || cfg.mode === 'hybrid') && !g.arms.dense.ran
}

/** Everything after the query vector: synchronous. */
export function runRecallSync(store: MemorySource, query: string | RecallQuery, config: RecallConfig, now: number, opts: SyncOptions): RecallTrace {
  const t0 = opts.startedAt ?? performance.now()
  const { cfg, q, texts, embedder, g } = gatherSync(store, query, config, now, opts, true)
  const prepared = opts.prepared

  const ts = performance.now()
  const rr = rerank(g.candidates, cfg, g.mode)
  const scoreMs = performance.now() - ts

  const ctx = renderResults(rr.results, g, cfg)

  const degraded = isDegraded(cfg, g)
  return {
    query: q.text,
    cue: q.cue ?? null,
    now,
    preset: opts.preset ?? null,
    config: cfg,
    embedder,
    degraded,
    degradedReason: degraded ? (g.arms.dense.reason ?? 'dense arm unavailable') : null,
    results: rr.results,
    dropped: rr.dropped,
    context: ctx.text,
    contextTokens: ctx.tokens,
    candidates: g.candidates,
    units: g.units,
    refreshed: cfg.unit === 'session' ? [] : rr.refreshed,
    counts: { inScope: g.inScope, inScopeCapped: g.inScopeCapped, dense: g.denseCount, lexical: g.lexicalCount, pool: rr.pool },
    timings: { totalMs: performance.now() - t0, embedMs: prepared.embedMs, denseMs: g.denseMs, lexicalMs: g.lexicalMs, scoreMs },
    mode: g.mode,
    unit: cfg.unit,
    texts: { dense: prepared.vector ? (embedder.name === 'vector' ? null : texts.dense) : null, lexical: g.arms.lexical.ran ? texts.lexical : null },
    arms: g.arms,
    injectedTokens: rr.injectedTokens,
    empty: explainEmpty({
      results: rr.results,
      dropped: rr.dropped,
      candidates: g.candidates,
      config: cfg,
      mode: g.mode,
      inScope: g.inScopeCapped ? undefined : g.inScope,
      degradedReason: degraded ? (g.arms.dense.reason ?? null) : null,
    }),
  }
}

/** The arms' work (the vector model resolved, every arm run, features measured); `units`: build the display records. */
function gatherSync(store: MemorySource, query: string | RecallQuery, config: RecallConfig, now: number, opts: SyncOptions, units: boolean) {
  const r = resolveGather(opts.reads ?? new PassReads(store, opts.vectors), query, config, now, opts, units)
  const g = r.input.cfg.unit === 'session' ? gatherSessions(r.input) : gatherMemories(r.input)
  return { ...r, g: noteUnlabelled(g, r.unlabelledNote) }
}

function noteUnlabelled(g: Gathered, note: string | null): Gathered {
  if (note && g.arms.dense.ran) g.arms.dense.reason = note
  return g
}

/** One recall's gather input: the query's texts, the vector model and index (or push-down) resolved through the gather's reads. */
function resolveGather(
  reads: PassReads,
  query: string | RecallQuery,
  config: RecallConfig,
  now: number,
  opts: Pick<SyncOptions, 'prepared' | 'depth'>,
  units: boolean,
) {
  const store = reads.store
  if (!Number.isFinite(now)) throw new RecallscopeError('BAD_INPUT', `now must be epoch milliseconds (got ${String(now)})`)
  // The config was validated once at the edge (request.ts buildConfig, resolveEventConfig, the
  // handlers' schemas); the engine trusts its type and never re-parses it (eval runs thousands).
  const cfg = config
  const q = toQuery(query)
  const texts = armTexts(q.text, q.cue, cfg.cueUse)
  if (cfg.mode === 'session') {
    if (cfg.unit === 'session') throw new RecallscopeError('BAD_INPUT', "mode 'session' lists one session's messages: use unit 'memory'")
    if (!cfg.scope.sessionId) throw new RecallscopeError('BAD_INPUT', "mode 'session' needs scope.sessionId (--session ID)")
  }
  const prepared = opts.prepared
  const embedder = { ...prepared.embedder }
  const owner = cfg.unit === 'session' ? 'session' : 'memory'

  // Which stored vectors: the config's model, else the embedder's; an explicit vector takes the first model of its length.
  let model: string | null = cfg.model ?? (embedder.name === 'vector' ? null : embedder.model)
  if (cfg.model && embedder.name !== 'vector' && embedder.model && embedder.model !== cfg.model)
    throw new RecallscopeError(
      'BAD_INPUT',
      `config.model is ${cfg.model} but the embedder ${embedder.name} makes ${embedder.model} vectors; drop model or pick the matching embedder`,
    )
  const vec = prepared.vector
  // Push-down stores (Postgres + pgvector) rank in the database: no vector index is loaded here.
  // (The reads' vector indexes do not apply to them: nothing is loaded.)
  const caps = reads.capabilities()
  const pushdown = caps.pushdown
  const pushModels = pushdown ? caps.vectorModels.filter((m) => m.ownerType === owner) : null
  if (vec && !model)
    model = pushModels
      ? (pushModels.find((m) => m.dim === vec.length)?.model ?? null)
      : (reads.storedModels(owner).find((m) => reads.vectors(m, owner).dim === vec.length) ?? null)
  if (embedder.name === 'vector') embedder.model = model
  // A store that records no model name (its vectors are labelled `<source>:<dim>`): the embedder the
  // user picked is taken to be the one that wrote them when the lengths agree; the arm says so.
  let unlabelledNote: string | null = null
  let mismatchNote: string | null = null
  if (vec && model && !cfg.model && embedder.name !== 'vector') {
    const own = pushModels ? pushModels.some((m) => m.model === model) : reads.storedModels(owner).includes(model)
    if (!own) {
      const label = pushModels
        ? pushModels.find((m) => isUnlabelledModel(m.model) && m.dim === vec.length)?.model
        : reads.storedModels(owner).find((m) => isUnlabelledModel(m) && reads.vectors(m, owner).dim === vec.length)
      if (label) {
        unlabelledNote = `the store does not record which model made its vectors (${label}); ${embedder.model}'s ${vec.length}-d query is compared with them`
        model = label
      } else {
        // Unlabelled vectors of another length: say so in those terms (the embedder is the wrong one), not "no vectors for <model>".
        const dims = pushModels
          ? pushModels.filter((m) => isUnlabelledModel(m.model)).map((m) => ({ model: m.model, dim: m.dim }))
          : store
              .storedModels(owner)
              .filter(isUnlabelledModel)
              .map((m) => ({ model: m, dim: reads.vectors(m, owner).dim }))
        if (dims.length)
          mismatchNote = `query embedder gives ${vec.length}-d, stored vectors are ${dims.map((d) => `${d.dim}-d (${d.model})`).join(', ')}: dense arm off`
      }
    }
  }

  let denseReason: string | null = prepared.reason
  let idx: VectorIndex | null = null
  let push: PushedModel | null = null
  let qn: Float64Array | null = null
  if (vec) {
    qn = normalizeQuery(vec)
    if (!qn) denseReason = 'the query vector is all zeros or not finite'
    else if (!model) {
      // Name the lengths that are stored: a query embedder of the wrong dimension is the usual cause.
      const stored = pushModels
        ? pushModels.map((m) => ({ model: m.model, dim: m.dim }))
        : reads.storedModels(owner).map((m) => ({ model: m, dim: reads.vectors(m, owner).dim }))
      denseReason = stored.length
        ? `query embedder gives ${vec.length}-d, stored vectors are ${stored.map((d) => `${d.dim}-d (${d.model})`).join(', ')}: dense arm off`
        : `no stored ${owner} vectors of length ${vec.length}`
    } else if (pushModels && pushdown) {
      const m = pushModels.find((x) => x.model === model)
      if (!m) denseReason = `no stored ${owner} vectors for model ${model}`
      else if (m.dim !== vec.length) denseReason = `query vector has ${vec.length} dimensions, stored ${model} vectors have ${m.dim}`
      else push = { model, dense: pushdown }
    } else {
      const i = reads.vectors(model, owner)
      if (i.count === 0) denseReason = `no stored ${owner} vectors for model ${model}`
      else if (i.dim !== vec.length) denseReason = `query vector has ${vec.length} dimensions, stored ${model} vectors have ${i.dim}`
      else idx = i
    }
  }
  if (mismatchNote && !idx && !push) denseReason = mismatchNote
  if (!idx && !push) qn = null

  const depth = Math.min(100_000, Math.max(cfg.candidatePool, Math.floor(opts.depth ?? fetchDepth(cfg.candidatePool))))
  const input: GatherInput = { store, reads, texts, cfg, now, idx, push, qn, denseReason, depth, units }
  return { cfg, q, texts, embedder, input, unlabelledNote }
}
