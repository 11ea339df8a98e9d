/**
 * Decision-trace shapes (contract section `trace.*`): a logged recall event,
 * its replay diff, "why not X" and "which memory drove it". Types only (plus
 * the knob table the renderer shows), no Node, no DOM.
 *
 * Where a logged event keeps more than the canonical columns (docs/internals/design.md
 * `recall_events`), two OPTIONAL additive columns are read when present:
 *  - `query_vector` — the query vector the agent used (little-endian float32
 *    BLOB, or a JSON array of numbers), of the logged `config.model`. Replay uses
 *    it instead of re-embedding, so an event replays exactly even when the model
 *    server is gone or the model was updated.
 *  - `context` — the exact block the agent injected. Without it the block is
 *    re-rendered from the logged results with today's memory text; with it,
 *    edited memory content becomes detectable (its text no longer appears).
 */
import type { DiffOp } from './evidence'
import type { Cue, EmbedderInfo, EventDecision, Features, GateName, Memory, RecallConfig, RecallEvent, RecallTrace, UnitInfo } from './types'

// ---------------------------------------------------------------------------
// trace.event
// ---------------------------------------------------------------------------

export interface TraceEventDetail {
  event: RecallEvent
  /** The full config the event ran with (the logged one, completed from its preset when partial). */
  config: RecallConfig
  /** logged = the full config was logged; partial = completed from the preset; preset = none logged (assumed) */
  configSource: 'logged' | 'partial' | 'preset'
  /** Why the config is not exactly what was logged, when it is not. */
  configNotes: string[]
  /** The injected memories in logged order, with their logged scores and today's text (null: deleted since). */
  injected: { id: string; rank: number; score: number; unit: UnitInfo | null }[]
  /** The context block: logged when the event stored one, else re-rendered from the logged results. */
  context: { text: string; tokens: number; source: 'logged' | 'rerendered'; note: string | null }
  /** The event carries its query vector (optional `query_vector` column). */
  loggedVector: { dim: number } | null
}

// ---------------------------------------------------------------------------
// trace.replay
// ---------------------------------------------------------------------------

/**
 * same      — same relative position among the ids both lists share, same score;
 * rescored  — same position, different score;
 * reordered — its position relative to the shared ids changed;
 * missing   — logged, not in the replay;
 * extra     — in the replay, not logged.
 * An id whose absolute rank moved only because another id went missing or came
 * in stays `same` (`shifted` says so).
 */
export type ReplayStatus = 'same' | 'rescored' | 'reordered' | 'missing' | 'extra'

/** Why a row differs. Each code has one meaning; `text` carries the numbers. */
export type CauseCode =
  | 'deleted' // the memory is no longer in the DB
  | 'created-after' // created after the event (current mode), or created_at rewritten to after it (logged mode)
  | 'out-of-scope' // a scope filter excludes it now (tier, kind, role, session… changed)
  | 'last-used-changed' // last_used_at was overwritten after the event
  | 'recency-input-changed' // the logged score implies another last_used_at / created_at than the row holds
  | 'time-passed' // replayed later: recency decayed
  | 'config-differs' // the replay config differs from the logged one
  | 'embedder-differs' // another model / embedder made the query vector
  | 'vector-changed' // its similarity differs under the same query vector: re-embedded or content edited
  | 'salience-changed'
  | 'lexical-changed' // its bm25 match changed: content edited
  | 'content-changed' // its text is not in the logged context block
  | 'relative' // minmax / RRF: its features are relative to the pool, another candidate's change moved it
  | 'displaced' // its own score is unchanged; others moved around it
  | 'gate' // the gate that keeps it out of the replay
  | 'unexplained'

export interface Cause {
  code: CauseCode
  text: string
}

export interface ReplayRow {
  id: string
  status: ReplayStatus
  logged: { rank: number; score: number } | null
  replayed: { rank: number; score: number } | null
  /** replayed − logged score, when both exist */
  scoreDelta: number | null
  /** absolute rank moved only because of missing / extra ids */
  shifted: boolean
  /** For an id not injected in the replay: the gate in the replay, or `pool` (outside the candidate pool), or `absent` (not a candidate). */
  replayGate: GateName | 'pool' | 'absent' | null
  causes: Cause[]
  unit: UnitInfo | null
}

export interface ConfigChange {
  /** dotted path, e.g. weights.recency */
  path: string
  logged: unknown
  replay: unknown
}

export interface TraceReplay {
  eventId: string
  mode: 'logged' | 'current'
  event: RecallEvent
  /** when the replay ran: the event's `at` (logged) or "today" (current) */
  now: number
  config: RecallConfig
  loggedConfig: RecallConfig
  configSource: TraceEventDetail['configSource']
  configChanges: ConfigChange[]
  vector: {
    /** logged = the event's `query_vector`; embedder = re-embedded; none = no vector (dense arm off) */
    source: 'logged' | 'embedder' | 'none'
    embedder: EmbedderInfo
    /** the model whose vectors the logged config searched */
    loggedModel: string | null
  }
  /** Same ids, same order, same scores as logged. */
  identical: boolean
  counts: Record<ReplayStatus, number>
  /** Logged ids in logged order, then extras in replay order. */
  rows: ReplayRow[]
  /** Event-level differences (config, embedder, time, degraded arms). */
  notes: Cause[]
  /** The replayed trace (every candidate). */
  trace: RecallTrace
  tookMs: number
}

// ---------------------------------------------------------------------------
// trace.why
// ---------------------------------------------------------------------------

export type KnobName =
  | 'weights.similarity'
  | 'weights.lexical'
  | 'weights.recency'
  | 'weights.salience'
  | 'recency.halfLifeHours'
  | 'floor'
  | 'minSimilarity'
  | 'topK'
  | 'tokenBudget'
  | 'candidatePool'

/**
 * The knobs "why not" searches, each alone (the others fixed), and the range a
 * change is normalised by so knobs compare. Weights are FREE: one weight moves,
 * the others stay (scoring.ts never renormalises weights). Log-scale knobs
 * compare ratios: |ln(to/from)| / ln(hi/lo).
 */
export const KNOBS: readonly { knob: KnobName; label: string; lo: number; hi: number; scale: 'linear' | 'log'; integer: boolean }[] = [
  { knob: 'weights.similarity', label: 'similarity weight', lo: 0, hi: 1, scale: 'linear', integer: false },
  { knob: 'weights.lexical', label: 'lexical weight', lo: 0, hi: 1, scale: 'linear', integer: false },
  { knob: 'weights.recency', label: 'recency weight', lo: 0, hi: 1, scale: 'linear', integer: false },
  { knob: 'weights.salience', label: 'salience weight', lo: 0, hi: 1, scale: 'linear', integer: false },
  { knob: 'recency.halfLifeHours', label: 'half-life (h)', lo: 1, hi: 8760, scale: 'log', integer: false },
  { knob: 'floor', label: 'floor', lo: 0, hi: 1, scale: 'linear', integer: false },
  { knob: 'minSimilarity', label: 'min similarity', lo: 0, hi: 1, scale: 'linear', integer: false },
  { knob: 'topK', label: 'topK', lo: 1, hi: 100, scale: 'log', integer: true },
  { knob: 'tokenBudget', label: 'token budget', lo: 100, hi: 16000, scale: 'log', integer: true },
  { knob: 'candidatePool', label: 'candidate pool', lo: 1, hi: 1000, scale: 'log', integer: true },
]

export interface KnobChange {
  knob: KnobName
  from: number | null
  to: number
  /** to − from */
  delta: number
  /** the change on the knob's range (KNOBS), to compare knobs */
  normalized: number
  /** the target's injected rank after the change */
  rank: number
  /** injected now, not after the change */
  pushedOut: string[]
  /** other ids injected after the change that are not now */
  pulledIn: string[]
  /** Applied and re-run: a real engine recall with the changed config (same query vector, same `now`). */
  verified: { engine: boolean; pushedOut: string[]; rank: number | null } | null
}

/** Two knob changes that inject the memory together when no single change does (why-not). */
export interface KnobPair {
  /** each change from the original config; `rank`/`pushedOut` are the pair's together */
  changes: [KnobChange, KnobChange]
  /** summed normalized change (the pair's cost) */
  normalized: number
  /** the target's injected rank with both changes (re-rank) */
  rank: number
  /** Both applied and re-run through the real engine. */
  verified: { engine: boolean; pushedOut: string[]; rank: number | null } | null
}

export interface KnobResult {
  knob: KnobName
  current: number | null
  change: KnobChange | null
  /** why no value of this knob brings the memory in */
  reason: string | null
  /** re-ranks tried */
  evaluations: number
}

export type WhyStatus =
  | 'injected'
  | 'dropped' // scored, removed by a gate
  | 'outside-pool' // a candidate, but no arm ranked it within candidatePool
  | 'not-candidate' // in scope, never reached (no vector / no lexical match / deeper than any pool)
  | 'out-of-scope'
  | 'excluded' // in the live transcript (scope.excludeIds / identical text): dedupe
  | 'not-yet-created'
  | 'not-found'

export interface ScopeFailure {
  field: string
  /** the memory's value */
  value: string
  /** what the scope asks for */
  expected: string
  /** the config edit that would let it in */
  fix: string
}

export interface WhyNot {
  memoryId: string
  /** the unit ranked: the memory, or its session for unit = session */
  unitId: string
  eventId: string | null
  query: string
  cue: Cue | null
  now: number
  config: RecallConfig
  status: WhyStatus
  /** one sentence */
  summary: string
  scope: { inScope: boolean; failures: ScopeFailure[]; viaBlend: boolean }
  /** Arm measurements, even beyond the pool (the engine is re-run deep enough to rank it). */
  candidate: {
    similarity: number | null
    bm25: number | null
    denseRank: number | null
    lexicalRank: number | null
    recencyRank: number | null
    inPool: boolean
    /** the smallest candidatePool that puts it in the pool (null: no arm can reach it) */
    poolNeeded: number | null
  } | null
  /** Its score breakdown under the config (null when not in the pool). */
  scored: { score: number; scoreRank: number; features: Features; contributions: Features; tokens: number; gate: GateName | null; rank: number | null } | null
  /** The gate that dropped it, with the numbers. */
  gate: { name: GateName | 'pool' | 'scope' | 'absent'; detail: string } | null
  /** Injected now (rank order), for context. */
  injected: { id: string; score: number }[]
  /** Every knob, searched alone. */
  knobs: KnobResult[]
  /** The smallest single change (by `normalized`), verified. */
  best: KnobChange | null
  /** When no single change injects it: the cheapest verified pair of changes (null when none, or not needed). */
  pair: KnobPair | null
  /** One line, first thing shown: "m-… is not injected because <gate>; <fix>". */
  verdict: string
  /** What no scoring knob can fix (scope, dedupe, missing vector…). */
  notes: string[]
  mode: string
  /** the memory asked about: its text and metadata (null when absent from the DB) */
  memory: Memory | null
  /** setup = config + query vector; trace = the recall (and the deep one when needed); search = the single-knob and pair searches (checks and re-ranks); verify = the engine re-runs of the changes found */
  timings: { totalMs: number; setupMs: number; traceMs: number; searchMs: number; verifyMs: number; evaluations: number; depth: number | null }
}

// ---------------------------------------------------------------------------
// trace.drivers
// ---------------------------------------------------------------------------

export interface DriverRow {
  id: string
  rank: number
  score: number
  /** score / Σ injected scores */
  share: number
  contributions: Features
  /** each feature's contribution / score */
  featureShares: Features
  /** Leave-one-out: re-rank the same candidates as if this memory did not exist. */
  loo: {
    /** injected ids without it */
    after: string[]
    /** rank-biased overlap (p = 0.9) of the injected list with and without it: 1 = nothing else moves */
    rbo: number
    /** the top result without it (null: nothing injected) */
    topAfter: string | null
    topChanged: boolean
    /** what takes its slot (null: nothing) */
    replacement: { id: string; score: number } | null
    /** Σ injected scores lost (its score − its replacement's) */
    scoreLoss: number
    /** context tokens with it − without it */
    tokenDelta: number
    /** the injected set without it: who comes in, and who else leaves (besides it) */
    entered?: string[]
    left?: string[]
  }
  unit: UnitInfo | null
}

/** One returned memory's support for the decision (src/shared/evidence.ts has the formula). */
export interface EvidenceRow {
  id: string
  rank: number
  /** the memory's text today (null: no longer in the DB) */
  text: string | null
  /** token support in [0, 1]: the idf-weighted share of the decision's content words this memory has */
  token: number
  /** the decision's content words it shares, heaviest first (weight = smoothed idf over the event's results) */
  shared: { term: string; weight: number }[]
  /** cosine between the decision text's embedding and the memory's stored vector; null = not measured (`embeddingWhy`) */
  embedding: number | null
  embeddingWhy: string | null
}

/** Which returned memories the decision's text actually uses (issue 20 point 5). Computed on demand, never at read time. */
export interface EvidenceAttribution {
  decision: EventDecision
  /** the text attributed: the message, or a tool call as `name arguments` */
  text: string
  /** the support of all returned memories together (words any of them has) */
  union: number
  /** the decision's content words with their weights, heaviest first */
  decisionTerms: { term: string; weight: number; df: number }[]
  /** the embedder that makes the store's vectors of the event's model; `reason` says why there is no embedding overlap */
  embedder: { spec: string | null; model: string | null; available: boolean; reason: string | null }
  /** in returned order */
  rows: EvidenceRow[]
}

export interface TraceDrivers {
  eventId: string
  /** the replay the drivers are computed on matches the log */
  identical: boolean
  notes: string[]
  total: number
  rows: DriverRow[]
  /** ids by share of the composite, largest first */
  byShare: string[]
  /** ids by leave-one-out influence (1 − rbo, then score loss), largest first */
  byInfluence: string[]
  mattersMost: { id: string; why: string } | null
  /** results follow an arm's order (recency / session / keyword), not the composite */
  orderMode: boolean
  /** evidence attribution of the decision; null when the event records no decision */
  evidence?: EvidenceAttribution | null
}

// ---------------------------------------------------------------------------
// trace.timeline
// ---------------------------------------------------------------------------

export interface TraceTimeline {
  total: number
  /** `total` stopped counting at the cap */
  truncated: boolean
  range: { min: number; max: number } | null
  binMs: number
  bins: { start: number; count: number; byPreset: Record<string, number> }[]
  agents: string[]
  users: string[]
  presets: string[]
  /** events skipped because `at` is not a usable time (text, NULL, out of range) */
  badTimestamps?: number
  tookMs: number
}

// ---------------------------------------------------------------------------
// trace.counterfactual (a job; its result)
// ---------------------------------------------------------------------------

/** One regeneration: the full context (baseline, `omitted` null) or the context without one memory. */
export interface CounterfactualRow {
  /** the memory left out; null = the baseline (every returned memory) */
  omitted: string | null
  /** its rank among the returned memories */
  rank: number | null
  /** the chat model's answer */
  text: string
  ms: number
  /** content-word similarity (Dice, src/shared/evidence.ts) to the logged decision; null when the event records none */
  vsOriginal: number | null
  /** the same, to the baseline answer (null for the baseline itself) */
  vsBaseline: number | null
  /** word diff baseline → this answer (null for the baseline) */
  diff: { ops: DiffOp[]; added: number; removed: number } | null
  /** how the context was built: the logged block, the logged block with the memory's line cut, or re-rendered from the results */
  context: 'logged' | 'logged-cut' | 'rerendered'
}

/** The result of a `trace.counterfactual` job. */
export interface CounterfactualReport {
  eventId: string
  chat: { spec: string; model: string; host: string }
  /** the logged decision's text (a tool call as `name arguments`), or null */
  original: string | null
  /** what the baseline call sent: the system message (instructions + context block) and the user message (the event's query) */
  prompt: { system: string; user: string }
  baseline: CounterfactualRow
  /** one per left-out memory, in returned order */
  rows: CounterfactualRow[]
  /** returned memories not left out (beyond `maxMemories`) */
  skipped: string[]
  calls: number
  promptTokens: number | null
  completionTokens: number | null
  tookMs: number
  notes: string[]
}
