/**
 * The five seed systems as full RecallConfigs (docs/internals/design.md "Presets"). Each one
 * reproduces its seed exactly; tests in src/main/recall/*.test.ts are built from
 * each seed's own rules and numbers. A preset is a starting point: merge a
 * partial config over it (`mergeConfig`, recall/request.ts `buildConfig`), the result is plain JSON.
 *
 * Some seeds describe more than one recall call (seed 000 has semantic, recency
 * and session modes); those are preset variants, named `preset:variant`.
 */
import { mergeConfig, recallConfigSchema, type PartialRecallConfig } from './config'
import { FRAMEWORK_PRESET_SPECS } from './frameworkPresets'
import { badInput, RecallscopeError } from './result'
import type { PresetName, RecallConfig } from './types'

export interface PresetVariant {
  name: string
  label: string
  description: string
  patch: PartialRecallConfig
  /** scope fields a recall with this variant needs */
  requires?: ('agentId' | 'userId' | 'sessionId')[]
}

export interface Preset {
  name: PresetName
  /** seed document number (docs/internals/recall-systems/README.md); null for a framework's own recall */
  seed: number | null
  /** the framework whose recall this reproduces (framework presets), with the source read */
  framework?: { name: string; source: string }
  label: string
  description: string
  config: RecallConfig
  /** scope fields a recall with this preset needs (checked by the CLI and recall.run) */
  requires?: ('agentId' | 'userId' | 'sessionId')[]
  variants?: PresetVariant[]
}

/** The preset used for missing fields of a partial config. */
export const DEFAULT_PRESET: PresetName = 'fieldguide'

const DAY_HOURS = 24
/** "every scoped row is ranked" (seeds 000, 002, 004): the largest pool the schema allows. */
const ALL = 100_000

/** Fields every preset shares unless it says otherwise (each preset still lists what its seed fixes). */
const BASE: RecallConfig = {
  mode: 'dense',
  unit: 'memory',
  scope: { tiers: ['working', 'long_term'] },
  candidatePool: 30,
  fusion: { method: 'rrf', rrfK: 60 },
  weights: { similarity: 1, lexical: 0, recency: 0, salience: 0 },
  recency: { halfLifeHours: 7 * DAY_HOURS, from: 'last_used' },
  normalize: 'none',
  minSimilarity: null,
  floor: null,
  topK: 5,
  gateOrder: 'floor-then-topk',
  tokenBudget: null,
  tokenEstimator: 'ceil4',
  overflow: 'stop',
  atLeastOne: false,
  refreshOnRecall: false,
  template: 'plain',
  cueUse: { dense: 'utterance', lexical: 'utterance' },
  useSessionSummaries: true,
  keywordFallback: false,
  missingVector: 'skip',
  tieBreak: 'newest',
}

const preset = (patch: PartialRecallConfig): RecallConfig => recallConfigSchema.parse(mergeConfig(BASE, patch))

export const PRESETS: readonly Preset[] = [
  {
    name: 'portal-episodic',
    seed: 0,
    label: 'Portal — episodic',
    description:
      'Sessions ranked by cosine of their summary vector (this agent + user, not archived); order by score, take SemanticTopK=3, THEN drop below MinRecallScore=0.65. Injected as "[Past Conversation Context]" ordered by date.',
    config: preset({
      mode: 'dense',
      // seed 000: every episode summary of the agent+user is loaded and ranked.
      unit: 'session',
      candidatePool: ALL,
      weights: { similarity: 1, lexical: 0, recency: 0, salience: 0 },
      floor: 0.65, // MinRecallScore = 0.65f
      topK: 3, // SemanticTopK = 3
      gateOrder: 'topk-then-floor', // .OrderByDescending(Score).Take(topK).Where(Score >= MinRecallScore)
      template: 'portal-episodic',
      useSessionSummaries: true, // UseSessionSummaries = true
    }),
    variants: [
      {
        name: 'recency',
        label: 'Recency (default mode)',
        description: 'RecallRecentAsync: always inject the RecentSessionsToInject=2 most recent sessions, no threshold.',
        patch: { mode: 'recency', topK: 2, floor: null },
      },
      {
        name: 'session',
        label: 'Session replay',
        description: "GetBySessionAsync: one session's messages in order.",
        patch: { mode: 'session', unit: 'memory', topK: ALL, floor: null, template: 'plain' },
        requires: ['sessionId'],
      },
      {
        name: 'full',
        label: 'Full messages',
        description: 'UseSessionSummaries = false: inject the sessions’ full message threads instead of summaries.',
        patch: { useSessionSummaries: false },
      },
    ],
  },
  {
    name: 'portal-semantic',
    seed: 1,
    label: 'Portal — semantic knowledge',
    description:
      'Knowledge chunks (semantic + procedural memories) by cosine: SemanticTopK=5 at SemanticMinScore=0.7, tenant filter, SemanticContextMaxTokens=2000. Injected as "[Retrieved Knowledge]" with Source lines.',
    config: preset({
      mode: 'dense',
      scope: { tiers: ['working', 'long_term'], kinds: ['semantic', 'procedural'] },
      candidatePool: 30,
      minSimilarity: 0.7, // SemanticMinScore: "Minimum cosine similarity threshold"
      topK: 5, // SemanticTopK
      tokenBudget: 2000, // SemanticContextMaxTokens
      template: 'portal-semantic',
    }),
  },
  {
    name: 'engram',
    seed: 2,
    label: 'Engram',
    description:
      'Every row of one session (working + long_term tiers, role/before/after filters) ranked by cosine with no threshold, first limit=10; embedder down → keyword fallback (words > 2 chars, newest first); userId blends up to ceil(limit/2) cross-session user memories.',
    config: preset({
      mode: 'dense',
      candidatePool: ALL,
      topK: 10, // limit (default 10)
      keywordFallback: true,
      missingVector: 'zero', // "a row with no embedding stays in the ranking with similarity 0"
      tieBreak: 'newest', // stable sort over ORDER BY timestamp DESC
      template: 'engram',
    }),
    requires: ['sessionId'],
  },
  {
    name: 'fieldguide',
    seed: 3,
    label: 'Field Guide — composite',
    description:
      'Dense wide net of 30 over the constructed cue, score 0.6·similarity + 0.25·recency + 0.15·salience (half-life 7 days from last use), floor 0.35 BEFORE topK 5, recalled memories refreshed; provenance labels, "previously inferred" for reflections.',
    config: preset({
      mode: 'dense',
      candidatePool: 30, // store.search(embed(cue), k=30)  # wide net
      weights: { similarity: 0.6, lexical: 0, recency: 0.25, salience: 0.15 }, // w=(0.6, 0.25, 0.15)
      recency: { halfLifeHours: 7 * DAY_HOURS, from: 'last_used' }, // half_life=7 * 86400, now - mem.last_used
      floor: 0.35, // floor(0.35)
      topK: 5, // k=5
      gateOrder: 'floor-then-topk', // "Take top-k only after dropping everything below a minimum composite score"
      refreshOnRecall: true, // h.mem.last_used = now
      cueUse: { dense: 'cue', lexical: 'utterance' }, // dense over the cue, lexical over the raw utterance
      template: 'fieldguide',
    }),
    variants: [
      {
        name: 'hybrid',
        label: 'Hybrid (cue + utterance)',
        description: 'Lexical over the raw utterance, dense over the constructed cue, fused with RRF (k=60).',
        patch: { mode: 'hybrid' },
      },
    ],
  },
  {
    name: 'neo',
    seed: 4,
    label: 'Neo — conversational recall',
    description:
      'All turns of one conversation by cosine; accumulate until topK=6 or the 2500-token budget ((len+3)/4) is spent, at least one hit; hits already in the live transcript dropped; no embedder → empty, never an error.',
    config: preset({
      mode: 'dense',
      scope: { tiers: ['working', 'long_term', 'archived'], roles: ['user', 'assistant'] },
      candidatePool: ALL, // "Score all turns"
      topK: 6, // recall.New: topK <= 0 → 6
      tokenBudget: 2500, // budgetTokens <= 0 → 2500
      tokenEstimator: 'neo', // (len(text) + 3) / 4
      overflow: 'stop', // `if used+cost > r.budget && len(out) > 0 { break }`
      atLeastOne: true,
      tieBreak: 'oldest', // sort.SliceStable over thread order
      template: 'neo',
    }),
    requires: ['sessionId'],
  },
]

/**
 * What each framework does when it recalls, as a config (issue 14). Every constant cites the
 * framework source it comes from; what the engine cannot express is said in the description.
 */
const FRAMEWORK_RECALL_PRESETS: Preset[] = [
  {
    name: 'mem0',
    seed: null,
    framework: { name: 'mem0', source: 'mem0ai 3.3.1 dist/oss/index.js: Memory.search, utils/scoring.ts scoreAndRank' },
    label: 'mem0 — search',
    description:
      'Memory.search: semantic candidates (cosine, internalLimit = max(topK·4, 60) = 80) below threshold 0.1 dropped, score = (semantic + BM25) / maxPossible with maxPossible = 2, topK 20. Approximation: mem0 squashes BM25 with a sigmoid (midpoint/steepness by query length) over its own lemmatized tokens and adds an entity boost (0.5·similarity of linked entities) — here lexical is FTS5 bm25 ÷ the best match, and there is no entity boost.',
    config: preset({
      mode: 'hybrid',
      // search() reads the vector store only: not the messages buffer mem0 keeps for extraction.
      scope: { tiers: ['working', 'long_term'], kinds: ['semantic'] },
      candidatePool: 80, // internalLimit = Math.max(topK * 4, 60) with topK = 20
      fusion: { method: 'weighted', rrfK: 60 },
      weights: { similarity: 0.5, lexical: 0.5, recency: 0, salience: 0 }, // (semanticScore + bm25Score) / maxPossible, maxPossible = 1 + 1
      minSimilarity: 0.1, // threshold = 0.1: `if (semanticScore < threshold) continue` (keyword-only hits never enter)
      topK: 20, // topK = 20
      missingVector: 'skip',
      tieBreak: 'newest',
    }),
    variants: [
      {
        name: 'semantic',
        label: 'Semantic only (no keyword or entity hit)',
        description: 'What Memory.search returns when no BM25 or entity match exists (maxPossible = 1): cosine ≥ 0.1, top 20. Exact.',
        patch: { mode: 'dense', weights: { similarity: 1, lexical: 0, recency: 0, salience: 0 } },
      },
    ],
  },
  {
    name: 'langgraph-store',
    seed: null,
    framework: { name: 'LangGraph', source: 'langgraph libs/checkpoint-sqlite/langgraph/store/sqlite/base.py _prepare_batch_search_queries; BaseStore.search' },
    label: 'LangGraph — store search',
    description:
      'SqliteStore.search(namespace_prefix, query=…): score = 1 − vec_distance_cosine(embedding, query) (cosine), best first, no threshold, limit 10, over the limit·2 = 20 best (item, field) rows. Not expressible: the max over several indexed fields of one item (one vector per item and model here) and namespace-prefix matching (scope by the exact namespace).',
    config: preset({
      mode: 'dense',
      // store items only: the checkpointer's turns are not in the store
      scope: { tiers: ['working', 'long_term'], kinds: ['semantic'] },
      candidatePool: 20, // op.limit * 2  # Expanded limit for better results
      weights: { similarity: 1, lexical: 0, recency: 0, salience: 0 }, // score_expr = "1.0 - vec_distance_cosine(sv.embedding, ?)"
      minSimilarity: null,
      floor: null,
      topK: 10, // BaseStore.search(..., limit=10)
      missingVector: 'skip', // JOIN store_vectors: items put with index=False are never returned
    }),
  },
  {
    name: 'openai-agents',
    seed: null,
    framework: { name: 'OpenAI Agents SDK', source: 'openai-agents-python src/agents/memory/sqlite_session.py SQLiteSession.get_items' },
    label: 'OpenAI Agents SDK — session items',
    description:
      "SQLiteSession.get_items(limit): the session's latest `limit` valid items (ORDER BY id DESC LIMIT n), no ranking; SessionSettings.limit defaults to None = every item, so topK is all — set it to your limit. Rows that are not JSON are skipped (they open as archived). Not expressible: the SDK hands them back oldest first; here they are listed newest first.",
    config: preset({
      mode: 'recency',
      scope: { tiers: ['working', 'long_term'] },
      candidatePool: ALL,
      recency: { halfLifeHours: 7 * DAY_HOURS, from: 'created' }, // ORDER BY id: insertion order (created_at, then row id)
      weights: { similarity: 0, lexical: 0, recency: 1, salience: 0 },
      minSimilarity: null,
      floor: null,
      topK: ALL, // SessionSettings.limit = None → all items
    }),
    requires: ['sessionId'],
    variants: [
      {
        name: 'last-10',
        label: 'Last 10 items (get_items(limit=10))',
        description: 'session.get_items(limit=10): the ten latest items of the session.',
        patch: { topK: 10 },
      },
    ],
  },
]

/** The frameworks described as data in frameworkPresets.ts (CrewAI, mcp-memory-service), as presets. */
const FRAMEWORK_SPEC_PRESETS: Preset[] = FRAMEWORK_PRESET_SPECS.map((x) => ({
  name: x.name as PresetName,
  seed: null,
  framework: { name: x.framework, source: x.source },
  label: x.label,
  description: x.gaps.length ? `${x.description} Not expressible: ${x.gaps.join(' ')}` : x.description,
  config: preset(x.patch),
  requires: x.requires,
}))

/** Every framework's own recall. */
const FRAMEWORK_PRESETS: readonly Preset[] = [...FRAMEWORK_RECALL_PRESETS, ...FRAMEWORK_SPEC_PRESETS]

/** Seed presets, then the frameworks' own recall. */
export const ALL_PRESETS: readonly Preset[] = [...PRESETS, ...FRAMEWORK_PRESETS]

export function presetNames(): string[] {
  const out: string[] = []
  for (const p of ALL_PRESETS) {
    out.push(p.name)
    for (const v of p.variants ?? []) out.push(`${p.name}:${v.name}`)
  }
  return out
}

/** A preset (or `preset:variant`) by name, with what it requires. Throws BAD_INPUT for an unknown name. */
export function getPreset(name: string): { name: string; preset: Preset; config: RecallConfig; requires: ('agentId' | 'userId' | 'sessionId')[] } {
  // A framework preset's own name may hold a colon (`mcp-memory-service:rrf`): exact names first.
  const exact = ALL_PRESETS.find((x) => x.name === name)
  if (exact) return { name, preset: exact, config: structuredClone(exact.config), requires: exact.requires ?? [] }
  const [base, variant] = name.split(':', 2)
  const p = ALL_PRESETS.find((x) => x.name === base)
  if (!p) throw new RecallscopeError('BAD_INPUT', `Unknown preset '${name}'. Presets: ${presetNames().join(', ')}`)
  if (variant === undefined) return { name, preset: p, config: structuredClone(p.config), requires: p.requires ?? [] }
  const v = p.variants?.find((x) => x.name === variant)
  if (!v) throw new RecallscopeError('BAD_INPUT', `Preset ${p.name} has no variant '${variant}'. Presets: ${presetNames().join(', ')}`)
  return { name, preset: p, config: recallConfigSchema.parse(mergeConfig(p.config, v.patch)), requires: v.requires ?? p.requires ?? [] }
}

/** Validate a full config (e.g. after `--set`), throwing BAD_INPUT with the first problem. */
export function validateConfig(raw: unknown): RecallConfig {
  const parsed = recallConfigSchema.safeParse(raw)
  if (!parsed.success) throw badInput('Invalid recall config', parsed.error, '(config)')
  return parsed.data
}

/** Scope fields missing for a preset's requirements (empty when satisfied). */
export function missingRequirements(requires: readonly string[], scope: RecallConfig['scope']): string[] {
  const s = scope as unknown as Record<string, unknown>
  return requires.filter((k) => s[k] === undefined || s[k] === '')
}
