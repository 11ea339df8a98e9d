/**
 * RecallConfig schema (a public format: users paste it into their agents) and
 * the merge rules for partial configs. docs/internals/design.md "RecallConfig".
 */
import { z } from 'zod'

const finite = z.number().refine(Number.isFinite, 'must be a finite number')
const nonNegInt = z.number().int().min(0)

export const scopeSchema = z.strictObject({
  agentId: z.string().optional(),
  userId: z.string().optional(),
  sessionId: z.string().optional(),
  tenantId: z.string().optional(),
  /** @default ['working','long_term'] */
  tiers: z.array(z.string()).default(['working', 'long_term']),
  kinds: z.array(z.string()).optional(),
  roles: z.array(z.string()).optional(),
  /** created_at >= after (ms) */
  after: finite.optional(),
  /** created_at <= before (ms) */
  before: finite.optional(),
  /** Dedupe against the live transcript (seed 004): dropped with gate `dedupe`. */
  excludeIds: z.array(z.string()).optional(),
  /** Engram: also blend in this user's cross-session memories (user_id set, session_id NULL). */
  blendUserId: z.string().optional(),
})

const weightsSchema = z.strictObject({
  similarity: finite.min(0),
  lexical: finite.min(0),
  recency: finite.min(0),
  salience: finite.min(0),
})

/** The full config: every field required (what the engine runs). */
export const recallConfigSchema = z.strictObject({
  mode: z.enum(['hybrid', 'dense', 'lexical', 'recency', 'session']),
  /** session = rank sessions by their summary vector (seed 000). @default 'memory' */
  unit: z.enum(['memory', 'session']),
  /** Whose stored vectors the dense arm searches. @default the embedder's model */
  model: z.string().min(1).optional(),
  scope: scopeSchema,
  /** Wide net: how many candidates each arm contributes. @default 30 */
  candidatePool: z.number().int().min(1).max(100_000),
  fusion: z.strictObject({ method: z.enum(['rrf', 'weighted']), rrfK: finite.min(0) }),
  weights: weightsSchema,
  recency: z.strictObject({ halfLifeHours: finite.gt(0), from: z.enum(['last_used', 'created']) }),
  /** minmax = per-query min-max normalisation of each feature (Generative Agents). @default 'none' */
  normalize: z.enum(['none', 'minmax']),
  /** Gate on raw cosine similarity, applied before scoring gates. null = off. */
  minSimilarity: finite.min(-1).max(1).nullable(),
  /** Gate on the composite score. null = off. */
  floor: finite.nullable(),
  topK: nonNegInt.max(100_000),
  /** Seed 000 takes topK then filters; seed 003 filters then takes topK. */
  gateOrder: z.enum(['floor-then-topk', 'topk-then-floor']),
  tokenBudget: nonNegInt.nullable(),
  /** ceil4 = ceil(len/4); neo = floor((len+3)/4) (seed 004). */
  tokenEstimator: z.enum(['ceil4', 'neo']),
  /** When the budget is exceeded: stop at the first that does not fit (seed 004) or skip it and keep trying. @default 'stop' */
  overflow: z.enum(['stop', 'skip']),
  /** Return one result even if it alone exceeds the budget (seed 004). */
  atLeastOne: z.boolean(),
  /** Simulate `last_used_at = now` for injected memories (seed 003). Written only in write mode. */
  refreshOnRecall: z.boolean(),
  template: z.enum(['plain', 'portal-episodic', 'portal-semantic', 'engram', 'fieldguide', 'neo']),
  /** Which text each arm sees when a cue is given (seed 003: dense = cue, lexical = raw utterance). */
  cueUse: z.strictObject({ dense: z.enum(['cue', 'utterance']), lexical: z.enum(['cue', 'utterance']) }),
  /** unit=session: inject summaries or full messages (seed 000 UseSessionSummaries). @default true */
  useSessionSummaries: z.boolean(),
  /** Engram: with no embedder, fall back to keyword search (any word > 2 chars, newest first). */
  keywordFallback: z.boolean(),
  /** Optional (older configs lack it). Engram ranks unembedded rows at similarity 0. @default 'skip' */
  missingVector: z.enum(['skip', 'zero']).optional(),
  /** Optional. Equal scores: newest (Engram) or oldest (Neo) first. @default 'newest' */
  tieBreak: z.enum(['newest', 'oldest']).optional(),
})

/** A partial config: any subset of fields, nested objects partial too. Missing fields come from a preset. */
export const partialConfigSchema = z.strictObject({
  mode: recallConfigSchema.shape.mode.optional(),
  unit: recallConfigSchema.shape.unit.optional(),
  model: z.string().min(1).optional(),
  scope: scopeSchema.partial().optional(),
  candidatePool: recallConfigSchema.shape.candidatePool.optional(),
  fusion: recallConfigSchema.shape.fusion.partial().optional(),
  weights: weightsSchema.partial().optional(),
  recency: recallConfigSchema.shape.recency.partial().optional(),
  normalize: recallConfigSchema.shape.normalize.optional(),
  minSimilarity: recallConfigSchema.shape.minSimilarity.optional(),
  floor: recallConfigSchema.shape.floor.optional(),
  topK: recallConfigSchema.shape.topK.optional(),
  gateOrder: recallConfigSchema.shape.gateOrder.optional(),
  tokenBudget: recallConfigSchema.shape.tokenBudget.optional(),
  tokenEstimator: recallConfigSchema.shape.tokenEstimator.optional(),
  overflow: recallConfigSchema.shape.overflow.optional(),
  atLeastOne: z.boolean().optional(),
  refreshOnRecall: z.boolean().optional(),
  template: recallConfigSchema.shape.template.optional(),
  cueUse: recallConfigSchema.shape.cueUse.partial().optional(),
  useSessionSummaries: z.boolean().optional(),
  keywordFallback: z.boolean().optional(),
  missingVector: z.enum(['skip', 'zero']).optional(),
  tieBreak: z.enum(['newest', 'oldest']).optional(),
})
export type PartialRecallConfig = z.infer<typeof partialConfigSchema>

/**
 * RecallConfig: a public format (users paste it into their agents), docs/internals/design.md
 * "RecallConfig". The type is the schema's: one definition, no casts.
 */
export type RecallConfig = z.infer<typeof recallConfigSchema>
export type RecallScope = z.infer<typeof scopeSchema>
export type Weights = z.infer<typeof weightsSchema>

export const cueSchema = z.strictObject({
  goal: z.string().optional(),
  currentStep: z.string().optional(),
  openQuestions: z.array(z.string()).optional(),
})

/** Deep-merge a partial config over a base (objects merged, arrays and scalars replaced). */
export function mergeConfig(base: RecallConfig, patch: PartialRecallConfig | undefined): RecallConfig {
  if (!patch) return structuredClone(base)
  const out = structuredClone(base) as unknown as Record<string, unknown>
  for (const [k, v] of Object.entries(patch)) {
    if (v === undefined) continue
    const cur = out[k]
    if (v && typeof v === 'object' && !Array.isArray(v) && cur && typeof cur === 'object' && !Array.isArray(cur)) {
      const merged = { ...(cur as Record<string, unknown>) }
      for (const [k2, v2] of Object.entries(v)) if (v2 !== undefined) merged[k2] = v2
      out[k] = merged
    } else out[k] = v
  }
  return out as unknown as RecallConfig
}

/**
 * Set a field by dotted path (CLI `--set a.b=value`): value parsed as JSON when
 * it parses, else kept as a string. Returns a new object.
 */
export function setByPath<T extends object>(obj: T, dotted: string, raw: string): T {
  let value: unknown = raw
  try {
    value = JSON.parse(raw)
  } catch {
    /* a plain string */
  }
  const keys = dotted.split('.').filter(Boolean)
  if (keys.length === 0) throw new Error(`Empty key in --set ${dotted}=${raw}`)
  // `--set __proto__.x=1` would write Object.prototype (issue 10): no such config key exists.
  const bad = keys.find((k) => k === '__proto__' || k === 'constructor' || k === 'prototype')
  if (bad) throw new Error(`Cannot set ${dotted}: "${bad}" is not a config key`)
  const out = structuredClone(obj) as Record<string, unknown>
  let cur: Record<string, unknown> = out
  for (let i = 0; i < keys.length - 1; i++) {
    const next = cur[keys[i]]
    if (next === undefined || next === null) cur[keys[i]] = {}
    else if (typeof next !== 'object' || Array.isArray(next)) throw new Error(`Cannot set ${dotted}: ${keys.slice(0, i + 1).join('.')} is not an object`)
    cur = cur[keys[i]] as Record<string, unknown>
  }
  cur[keys[keys.length - 1]] = value
  return out as T
}
