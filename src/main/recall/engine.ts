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
 * Length: the two gatherers (memory and session units) share the draft/arm state
 * and the scope strategy; they stay with runRecallSync, which is their only caller.
 */
import { armTexts } from '../../shared/cue'
import { explainEmpty } from '../../shared/explainEmpty'
import { renderResults } from '../../shared/render'
import { RecallscopeError } from '../../shared/result'
import { effectiveMode, isOrderMode, rerank, utf8Length } from '../../shared/scoring'
import type { ArmInfo, CandidateRaw, Cue, EffectiveMode, EmbedderInfo, Memory, RecallConfig, RecallTrace, Session, UnitInfo } from '../../shared/types'
import { embedQueryOrDegrade } from '../embed/cache'
import type { Embedder } from '../embed/types'
import type { DensePushdown, MemoryFilter, MemorySource } from '../store/source'
import type { VectorIndex } from '../store/vectors/vectorIndex'
import { isUnlabelledModel } from './models'
import { denseArm, normalizeQuery } from './dense'
import { blendFilter, engramKeywords, scopeFilter } from './scope'

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

/** Scopes up to this many rows give the lexical arm a `_rid` range (store lexicalPass). */
const LEXICAL_RANGE_CAP = 5000

function ridRange(rids: number[]): [number, number] {
  let lo = Infinity
  let hi = -Infinity
  for (const r of rids) {
    if (r < lo) lo = r
    if (r > hi) hi = r
  }
  return [lo, hi]
}

/** Matches one lexical pass reads (ranks beyond the arm's depth only serve as bm25 lookups). */
const LEXICAL_READ = 1000

/** Pool depth fetched per arm: at least the pool, at least 100 (room for the renderer's slider). */
export function fetchDepth(pool: number): number {
  return Math.min(100_000, Math.max(pool, 100))
}

function toQuery(q: string | RecallQuery): RecallQuery {
  return typeof q === 'string' ? { text: q, cue: null } : { text: q.text ?? '', cue: q.cue ?? null }
}

/** Embed the dense arm's text, degrading (never throwing) when the embedder is off or down (seeds 002, 004). */
export async function prepareVector(store: MemorySource, denseText: string, opts: RecallOptions): Promise<PreparedVector> {
  if (opts.queryVector) return { vector: opts.queryVector, embedder: { name: 'vector', model: null, available: true }, reason: null, embedMs: 0 }
  const e = opts.embedder
  if (!e) return { vector: null, embedder: { name: 'none', model: null, available: false }, reason: 'no embedder: the dense arm is off', embedMs: 0 }
  const info: EmbedderInfo = { name: e.name, model: e.model, available: e.enabled }
  if (!e.enabled) return { vector: null, embedder: info, reason: `embedder "${e.name}": the dense arm is off`, embedMs: 0 }
  if (denseText.trim() === '') return { vector: null, embedder: info, reason: 'empty query: nothing to embed', embedMs: 0 }
  const r = await embedQueryOrDegrade(store.workspace, e, denseText, { signal: opts.signal })
  if (!r.vector) info.available = false
  return {
    vector: r.vector,
    embedder: info,
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
}

type ArmState = ArmInfo

const armOff = (reason: string | null = null): ArmState => ({ ran: false, fetched: 0, exhausted: false, reason })

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
  // (`opts.vectors` — eval's shared indexes — does not apply to them: nothing is loaded.)
  const caps = store.capabilities()
  const pushdown = caps.pushdown
  const pushModels = pushdown ? caps.vectorModels.filter((m) => m.ownerType === owner) : null
  if (vec && !model)
    model = pushModels
      ? (pushModels.find((m) => m.dim === vec.length)?.model ?? null)
      : (store.storedModels(owner).find((m) => (opts.vectors ? opts.vectors(m, owner) : store.vectors(m, owner)).dim === vec.length) ?? null)
  if (embedder.name === 'vector') embedder.model = model
  // A store that records no model name (its vectors are labelled `<source>:<dim>`): the embedder the
  // user picked is taken to be the one that wrote them when the lengths agree; the arm says so.
  let unlabelledNote: string | null = null
  let mismatchNote: string | null = null
  if (vec && model && !cfg.model && embedder.name !== 'vector') {
    const own = pushModels ? pushModels.some((m) => m.model === model) : store.storedModels(owner).includes(model)
    if (!own) {
      const label = pushModels
        ? pushModels.find((m) => isUnlabelledModel(m.model) && m.dim === vec.length)?.model
        : store.storedModels(owner).find((m) => isUnlabelledModel(m) && (opts.vectors ? opts.vectors(m, owner) : store.vectors(m, owner)).dim === vec.length)
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
              .map((m) => ({ model: m, dim: (opts.vectors ? opts.vectors(m, owner) : store.vectors(m, owner)).dim }))
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
        : store.storedModels(owner).map((m) => ({ model: m, dim: (opts.vectors ? opts.vectors(m, owner) : store.vectors(m, owner)).dim }))
      denseReason = stored.length
        ? `query embedder gives ${vec.length}-d, stored vectors are ${stored.map((d) => `${d.dim}-d (${d.model})`).join(', ')}: dense arm off`
        : `no stored ${owner} vectors of length ${vec.length}`
    } else if (pushModels && pushdown) {
      const m = pushModels.find((x) => x.model === model)
      if (!m) denseReason = `no stored ${owner} vectors for model ${model}`
      else if (m.dim !== vec.length) denseReason = `query vector has ${vec.length} dimensions, stored ${model} vectors have ${m.dim}`
      else push = { model, dense: pushdown }
    } else {
      const i = opts.vectors ? opts.vectors(model, owner) : store.vectors(model, owner)
      if (i.count === 0) denseReason = `no stored ${owner} vectors for model ${model}`
      else if (i.dim !== vec.length) denseReason = `query vector has ${vec.length} dimensions, stored ${model} vectors have ${i.dim}`
      else idx = i
    }
  }
  if (mismatchNote && !idx && !push) denseReason = mismatchNote
  if (!idx && !push) qn = null

  const depth = Math.min(100_000, Math.max(cfg.candidatePool, Math.floor(opts.depth ?? fetchDepth(cfg.candidatePool))))
  const input: GatherInput = { store, texts, cfg, now, idx, push, qn, denseReason, depth, units }
  const g = cfg.unit === 'session' ? gatherSessions(input) : gatherMemories(input)
  if (unlabelledNote && g.arms.dense.ran) g.arms.dense.reason = unlabelledNote
  return { cfg, q, texts, embedder, g }
}

interface Gathered {
  candidates: CandidateRaw[]
  units: Record<string, UnitInfo>
  mode: EffectiveMode
  arms: { dense: ArmState; lexical: ArmState; recency: ArmState; order: ArmState }
  inScope: number
  inScopeCapped: boolean
  denseCount: number
  lexicalCount: number
  denseMs: number
  lexicalMs: number
}

/** A candidate under construction. */
interface Draft {
  id: string
  group?: 'blend'
  similarity: number | null
  denseRank: number | null
  bm25: number | null
  lexicalRank: number | null
  recencyRank: number | null
  orderKey?: number
  /** the lexical pass answered for this row (its bm25 set, or it has no match) */
  bm25Settled: boolean
}

/** A group's dense hits. */
function denseDraftsOf(drafts: Map<string, Draft>, group: 'blend' | undefined): Draft[] {
  const out: Draft[] = []
  for (const d of drafts.values()) if (d.denseRank !== null && d.group === group) out.push(d)
  return out
}

function draftOf(map: Map<string, Draft>, id: string, group: 'blend' | undefined): Draft | null {
  let d = map.get(id)
  if (d) return d.group === group ? d : null // an id in both groups stays in the primary one
  d = { id, group, similarity: null, denseRank: null, bm25: null, lexicalRank: null, recencyRank: null, bm25Settled: false }
  map.set(id, d)
  return d
}

/** What both gatherers (memory and session units) work from. */
interface GatherInput {
  store: MemorySource
  texts: { dense: string; lexical: string }
  cfg: RecallConfig
  now: number
  idx: VectorIndex | null
  /** the model whose dense search runs inside the store (push-down), or null */
  push: PushedModel | null
  qn: Float64Array | null
  denseReason: string | null
  depth: number
  /** build the units' display records (a trace shows them; an eval gather does not keep them) */
  units: boolean
}

/** A model whose dense arm runs in the store, with the store's push-down. */
interface PushedModel {
  model: string
  dense: DensePushdown
}

/** The dense arm of one group, in the store (push-down): same shape as denseArm's answer. */
function pushedDense(push: PushedModel, qn: Float64Array, filter: MemoryFilter, n: number, missingZero: boolean) {
  const r = push.dense.denseSearch({ vector: qn, model: push.model, ownerType: 'memory', filter, limit: n, missingZero })
  return { hits: r.hits, scope: null, exhausted: r.exhausted, inScope: r.inScope, inScopeCapped: r.inScopeCapped, method: r.method }
}

function gatherMemories({ store, texts, cfg, now, idx, push, qn, denseReason, depth, units: withUnits }: GatherInput): Gathered {
  const groups: { filter: MemoryFilter; group: 'blend' | undefined }[] = [{ filter: scopeFilter(cfg.scope, now), group: undefined }]
  const bf = blendFilter(cfg.scope, now)
  if (bf) groups.push({ filter: bf, group: 'blend' })
  const drafts = new Map<string, Draft>()
  const arms = { dense: armOff(denseReason), lexical: armOff(), recency: armOff('not recency mode'), order: armOff('not session or keyword mode') }
  let inScope = 0
  let inScopeCapped = false
  let inScopeKnown = false
  let denseCount = 0
  let lexicalCount = 0
  // In-scope rows per group when the scope is small (from the dense arm, or listed for the lexical arm).
  const scopes = new Map<string, { ids: string[]; rids: number[] }>()
  const bigScopes = new Set<string>()

  // Dense arm.
  const td = performance.now()
  if ((idx || push) && qn) {
    arms.dense = { ran: true, fetched: 0, exhausted: true, reason: null }
    for (const { filter, group } of groups) {
      const r = push
        ? pushedDense(push, qn, filter, depth, cfg.missingVector === 'zero')
        : denseArm(store, idx!, qn, filter, depth, cfg.missingVector === 'zero')
      if ('method' in r) arms.dense.pushdown = r.method
      if (r.scope) scopes.set(group ?? '', r.scope)
      else bigScopes.add(group ?? '')
      r.hits.forEach((h, i) => {
        const d = draftOf(drafts, h.id, group)
        if (!d) return
        d.similarity = h.similarity
        d.denseRank = i + 1
      })
      arms.dense.fetched = Math.max(arms.dense.fetched, r.hits.length)
      arms.dense.exhausted &&= r.exhausted
      denseCount += r.hits.length
      if (group === undefined) {
        inScope = r.inScope
        inScopeCapped = r.inScopeCapped
        inScopeKnown = true
      }
    }
  }
  const denseMs = performance.now() - td

  // Lexical arm (always, when the utterance has words: its bm25 is a feature in every mode).
  // One pass per group, which also returns the bm25 of the group's dense hits (or reads deep enough
  // that it usually holds them), so they need no second pass.
  const tl = performance.now()
  const lexOk = store.hasLexicalTerms(texts.lexical)
  const knownBm25 = new Map<string, number>()
  let allBm25Known = true
  if (lexOk) {
    arms.lexical = { ran: true, fetched: 0, exhausted: true, reason: null }
    // Whether a recency / order arm will add rows after this pass (the mode is already decided:
    // the dense arm has run and lexOk is the lexical arm's `ran`). Without one, every candidate is
    // a lexical hit or a dense hit, so a listed scope's pass reads depth + 1 matches (enough for
    // the ranks and `exhausted`) and the dense hits' bm25 comes back with it (alsoIds); with one,
    // it reads LEXICAL_READ so those rows' bm25 is usually known without a second pass.
    const orderArm = isOrderMode(effectiveMode(cfg, { dense: arms.dense.ran, lexical: true }))
    for (const { filter, group } of groups) {
      let sc = scopes.get(group ?? '')
      if (!sc && !bigScopes.has(group ?? '')) {
        const listed = store.scopeRows(filter, LEXICAL_RANGE_CAP + 1)
        if (listed.ids.length <= LEXICAL_RANGE_CAP) scopes.set(group ?? '', (sc = listed))
      }
      // (Only for a listing of the lexical arm's size: the dense arm lists any scope under missingVector
      // 'zero', and FTS5 may have to read such a range to its end to find every asked row.)
      const short = sc !== undefined && sc.ids.length <= LEXICAL_RANGE_CAP && !orderArm
      const read = short ? depth + 1 : Math.max(depth, LEXICAL_READ)
      // A big scope's pass also returns the bm25 of this group's dense hits (store lexicalPass): no second pass.
      const dense = sc && !short ? [] : denseDraftsOf(drafts, group)
      const pass =
        sc && sc.ids.length === 0
          ? null
          : store.lexicalPass({
              text: texts.lexical,
              filter,
              limit: read,
              ridRange: sc ? ridRange(sc.rids) : null,
              alsoIds: dense.map((d) => d.id),
              listed: sc ?? undefined,
            })
      const hits = pass?.hits ?? []
      if (hits.length >= read) allBm25Known = false
      const ranked = Math.min(depth, hits.length)
      for (let i = 0; i < hits.length; i++) {
        const h = hits[i]
        const d = i < ranked ? draftOf(drafts, h.id, group) : null
        // Ranked rows of another group's drafts, and matches past the ranks, serve as bm25 lookups.
        if (!d) knownBm25.set(h.id, h.bm25)
        else {
          d.bm25 = h.bm25
          d.lexicalRank = i + 1
        }
      }
      if (pass?.alsoKnown) {
        // Every asked row's bm25 is now settled: its number, or no match.
        for (const d of dense) {
          d.bm25Settled = true
          const b = d.lexicalRank === null ? pass.also.get(d.id) : undefined
          if (b !== undefined) d.bm25 = b
        }
      }
      arms.lexical.fetched = Math.max(arms.lexical.fetched, ranked)
      arms.lexical.exhausted &&= hits.length <= depth
      lexicalCount += ranked
    }
  } else arms.lexical.reason = texts.lexical.trim() === '' ? 'empty query' : 'the query has no words to match'
  let lexicalMs = performance.now() - tl

  const mode = effectiveMode(cfg, { dense: arms.dense.ran, lexical: arms.lexical.ran })

  if (mode === 'recency') {
    arms.recency = { ran: true, fetched: 0, exhausted: true, reason: null }
    for (const { filter, group } of groups) {
      const rows = store.memoriesWhere(filter, { limit: depth, order: 'created_desc' })
      rows.forEach((m, i) => {
        const d = draftOf(drafts, m.id, group)
        if (d) d.recencyRank = i + 1
      })
      arms.recency.fetched = Math.max(arms.recency.fetched, rows.length)
      arms.recency.exhausted &&= rows.length < depth
    }
  } else if (mode === 'session' || mode === 'keyword') {
    arms.order = { ran: true, fetched: 0, exhausted: true, reason: null }
    const keywords = engramKeywords(texts.lexical)
    for (const { filter, group } of groups) {
      // seed 000 GetBySessionAsync: the session's messages in order; seed 002 keyword fallback: newest first.
      const ids =
        mode === 'session' ? store.memoriesWhere(filter, { limit: depth, order: 'turn' }).map((m) => m.id) : store.keywordSearch(filter, keywords, depth)
      ids.forEach((id, i) => {
        const d = draftOf(drafts, id, group)
        if (d) d.orderKey = i + 1
      })
      arms.order.fetched = Math.max(arms.order.fetched, ids.length)
      arms.order.exhausted &&= ids.length < depth
    }
  }

  if (!inScopeKnown) {
    const listed = scopes.get('')
    const c = listed ? { count: listed.ids.length, capped: false } : store.countScope(groups[0].filter)
    inScope = c.count
    inScopeCapped = c.capped
  }
  if (bf) inScope += store.countScope(bf).count

  // Measure what the arms did not: similarity of non-dense hits, bm25 of non-lexical hits.
  const ids = [...drafts.keys()]
  const mems = store.getMemories(ids)
  if (idx && qn) {
    for (const d of drafts.values()) {
      if (d.denseRank !== null) continue
      const row = idx.rowOf.get(d.id)
      d.similarity = row === undefined ? null : idx.dot(row, qn)
    }
  } else if (push && qn) {
    const need = [...drafts.values()].filter((d) => d.denseRank === null).map((d) => d.id)
    const sims = push.dense.similarities(need, qn, push.model, 'memory')
    for (const id of need) drafts.get(id)!.similarity = sims.get(id) ?? null
  }
  if (arms.lexical.ran) {
    const t2 = performance.now()
    const missing: string[] = []
    for (const d of drafts.values()) {
      if (d.lexicalRank !== null) continue
      const b = knownBm25.get(d.id)
      if (b !== undefined) d.bm25 = b
      // When the pass read every match in scope, a row it did not return has no match.
      else if (!allBm25Known && !d.bm25Settled) missing.push(d.id)
    }
    for (let i = 0; i < missing.length; i += 500) {
      const chunk = missing.slice(i, i + 500)
      for (const h of store.lexicalPass({ text: texts.lexical, filter: { ids: chunk }, limit: chunk.length }).hits) {
        const d = drafts.get(h.id)
        if (d) d.bm25 = h.bm25
      }
    }
    lexicalMs += performance.now() - t2
  }
  let maxNeg = 0
  for (const d of drafts.values()) if (d.bm25 !== null && -d.bm25 > maxNeg) maxNeg = -d.bm25

  // Live-transcript dedupe (seed 004): by id, or by identical trimmed text like Neo's renderRecall.
  const excludeIds = cfg.scope.excludeIds ?? []
  const excludedTexts = new Set<string>()
  if (excludeIds.length) for (const m of store.getMemories(excludeIds).values()) excludedTexts.add(m.content.trim())
  const excludeSet = new Set(excludeIds)
  // Engram's blend skips user memories whose content equals a session result's.
  const primaryByContent = new Map<string, string[]>()
  if (bf)
    for (const d of drafts.values()) {
      if (d.group) continue
      const m = mems.get(d.id)
      if (!m) continue
      const list = primaryByContent.get(m.content)
      if (list) list.push(d.id)
      else primaryByContent.set(m.content, [d.id])
    }

  const candidates: CandidateRaw[] = []
  const units: Record<string, UnitInfo> = {}
  for (const d of drafts.values()) {
    const m = mems.get(d.id)
    if (!m) continue // deleted under us
    const lastUsed = m.lastUsedAt !== null && m.lastUsedAt <= now ? m.lastUsedAt : m.createdAt
    const c: CandidateRaw = {
      id: d.id,
      similarity: d.similarity,
      lexical: d.bm25 !== null && maxNeg > 0 ? -d.bm25 / maxNeg : 0,
      bm25: d.bm25,
      ageLastUsedMs: Math.max(0, now - lastUsed),
      ageCreatedMs: Math.max(0, now - m.createdAt),
      salience: m.salience ?? 0,
      denseRank: d.denseRank,
      lexicalRank: d.lexicalRank,
      recencyRank: d.recencyRank,
      textLength: m.content.length,
      // seed 004 budgets the trimmed turn text in bytes: (len(text) + 3) / 4
      textBytes: textBytesOf(m),
    }
    if (d.orderKey !== undefined) c.orderKey = d.orderKey
    if (d.group) {
      c.group = d.group
      const same = primaryByContent.get(m.content)
      if (same) c.sameContentAs = same
    }
    if (excludeSet.has(d.id) || (excludedTexts.size > 0 && excludedTexts.has(m.content.trim()))) c.excluded = true
    candidates.push(c)
    if (withUnits) units[d.id] = unitOfMemory(m)
  }
  return { candidates, units, mode, arms, inScope, inScopeCapped, denseCount, lexicalCount, denseMs, lexicalMs }
}

/**
 * UTF-8 length of a memory's trimmed text, kept per decoded row: the store hands out the same
 * Memory object until its data changes, and an eval measures the same rows for every case.
 */
const textBytesMemo = new WeakMap<Memory, number>()
function textBytesOf(m: Memory): number {
  let n = textBytesMemo.get(m)
  if (n === undefined) textBytesMemo.set(m, (n = utf8Length(m.content.trim())))
  return n
}

export function unitOfMemory(m: Memory): UnitInfo {
  return {
    id: m.id,
    content: m.content,
    kind: m.kind,
    role: m.role,
    tier: m.tier,
    sessionId: m.sessionId,
    userId: m.userId,
    agentId: m.agentId,
    createdAt: m.createdAt,
    lastUsedAt: m.lastUsedAt,
    turn: m.turn,
    source: m.source,
    salience: m.salience,
    metadata: m.metadata,
  }
}

/** A session as a recall unit (seed 000's episodes), shown with `content` (its summary or its messages). */
export function unitOfSession(s: Session, content: string): UnitInfo {
  return {
    id: s.id,
    content,
    kind: null,
    role: null,
    tier: s.isArchived ? 'archived' : null,
    sessionId: s.id,
    userId: s.userId,
    agentId: s.agentId,
    createdAt: s.startedAt,
    lastUsedAt: s.endedAt,
    turn: null,
    source: null,
    salience: null,
  }
}

/** seed 000: episodes (sessions) ranked by the cosine of their summary vector. */
function gatherSessions({ store, texts, cfg, now, idx, push, qn, denseReason, depth, units: withUnits }: GatherInput): Gathered {
  const sessions = store.sessionsForRecall(cfg.scope, now)
  const drafts = new Map<string, Draft>()
  const arms = {
    dense: armOff(denseReason),
    lexical: armOff('no lexical index over session summaries'),
    recency: { ran: true, fetched: 0, exhausted: true, reason: null } as ArmState,
    order: armOff('not keyword mode'),
  }
  const td = performance.now()
  let denseCount = 0
  // Push-down stores: the similarity of every candidate session, computed in the database (ties then break by id).
  const pushed =
    push && qn
      ? push.dense.similarities(
          sessions.map((s) => s.id),
          qn,
          push.model,
          'session',
        )
      : null
  if ((idx || pushed) && qn) {
    const scored: { s: Session; row: number; sim: number | null }[] = []
    for (const s of sessions) {
      const row = pushed ? (pushed.has(s.id) ? 0 : undefined) : idx!.rowOf.get(s.id)
      if (row !== undefined) scored.push({ s, row, sim: pushed ? pushed.get(s.id)! : idx!.dot(row, qn) })
      else if (cfg.missingVector === 'zero') scored.push({ s, row: Infinity, sim: null }) // seed 000 requires SummaryEmbedding != null
    }
    scored.sort((a, b) => (b.sim ?? 0) - (a.sim ?? 0) || a.row - b.row || (a.s.id < b.s.id ? -1 : 1))
    const top = scored.slice(0, depth)
    top.forEach((x, i) => {
      const d = draftOf(drafts, x.s.id, undefined)!
      d.similarity = x.sim
      d.denseRank = i + 1
    })
    arms.dense = { ran: true, fetched: top.length, exhausted: scored.length <= depth, reason: null }
    denseCount = top.length
  }
  const denseMs = performance.now() - td
  // seed 000 RecallRecentAsync: the N most recent sessions (sessionsForRecall is newest first).
  const recent = sessions.slice(0, depth)
  recent.forEach((s, i) => (draftOf(drafts, s.id, undefined)!.recencyRank = i + 1))
  arms.recency.fetched = recent.length
  arms.recency.exhausted = sessions.length <= depth
  const mode = effectiveMode(cfg, { dense: arms.dense.ran, lexical: false })
  if (mode === 'keyword') {
    const keywords = engramKeywords(texts.lexical)
    const hits = sessions.filter((s) => keywords.length === 0 || keywords.some((k) => (s.summary ?? '').toLowerCase().includes(k))).slice(0, depth)
    hits.forEach((s, i) => (draftOf(drafts, s.id, undefined)!.orderKey = i + 1))
    arms.order = { ran: true, fetched: hits.length, exhausted: hits.length < depth, reason: null }
  }
  if ((idx || pushed) && qn)
    for (const d of drafts.values()) {
      if (d.denseRank !== null) continue
      if (pushed) {
        d.similarity = pushed.get(d.id) ?? null
        continue
      }
      const row = idx!.rowOf.get(d.id)
      d.similarity = row === undefined ? null : idx!.dot(row, qn)
    }
  const byId = new Map(sessions.map((s) => [s.id, s]))
  const messages = cfg.useSessionSummaries ? null : store.sessionMessages([...drafts.keys()], now)
  const candidates: CandidateRaw[] = []
  const units: Record<string, UnitInfo> = {}
  for (const d of drafts.values()) {
    const s = byId.get(d.id)!
    const started = s.startedAt ?? s.endedAt ?? now
    const lastActive = s.endedAt ?? started
    // UseSessionSummaries = false: the full thread, one "role: content" line per message.
    const text = messages ? (messages.get(s.id) ?? []).map((m) => `${m.role ?? 'unknown'}: ${m.content}`).join('\n') : (s.summary ?? '')
    const c: CandidateRaw = {
      id: s.id,
      similarity: d.similarity,
      lexical: 0,
      bm25: null,
      ageLastUsedMs: Math.max(0, now - lastActive),
      ageCreatedMs: Math.max(0, now - started),
      salience: 0,
      denseRank: d.denseRank,
      lexicalRank: null,
      recencyRank: d.recencyRank,
      textLength: text.length,
      textBytes: utf8Length(text.trim()),
    }
    if (d.orderKey !== undefined) c.orderKey = d.orderKey
    candidates.push(c)
    if (withUnits) units[s.id] = unitOfSession(s, text)
  }
  return { candidates, units, mode, arms, inScope: sessions.length, inScopeCapped: false, denseCount, lexicalCount: 0, denseMs, lexicalMs: 0 }
}
