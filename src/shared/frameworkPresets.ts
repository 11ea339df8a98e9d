/**
 * Each framework's own recall, as a preset (issue 14): what CrewAI, mcp-memory-service, …
 * do when they recall, as RecallConfig patches over the shared preset base (presets.ts
 * turns them into full configs). Every constant cites the framework source it comes from;
 * `gaps` says, exactly, what today's engine cannot reproduce, so a user knows where the
 * preset's numbers and the framework's own differ.
 *
 * Plain data on purpose: presets.ts imports this file (no import back, no cycle).
 */
import type { PartialRecallConfig } from './config'

export interface FrameworkPresetSpec {
  /** `--preset` name */
  name: string
  /** the framework (and the layouts it writes) */
  framework: string
  label: string
  description: string
  /** repository · file · commit the constants were read from */
  source: string
  patch: PartialRecallConfig
  /** what the engine cannot express (empty when the preset is exact) */
  gaps: string[]
  requires?: ('agentId' | 'userId' | 'sessionId')[]
}

const DAY_HOURS = 24

export const FRAMEWORK_PRESET_SPECS: readonly FrameworkPresetSpec[] = [
  {
    name: 'crewai',
    framework: 'CrewAI unified memory (crewai-lancedb)',
    label: 'CrewAI — composite recall',
    description:
      'Memory.recall(depth="shallow"): vector top limit=10, then composite = 0.5·similarity + 0.3·0.5^(age_days/30) + 0.2·importance with age from created_at, sorted; no threshold (min_score=0.0); recalled records get last_accessed = now.',
    source:
      'crewAIInc/crewAI lib/crewai/src/crewai/memory/types.py @ 01a07695e1cd15c64df93de0963cb5d7b0d3d927 (MemoryConfig, compute_composite_score); unified_memory.py @ 04b4254d00a86c189d27d1055c257e390725b09e (recall); storage/lancedb_storage.py @ 00835e156222e25819f3429ef38c422377b671df (search)',
    patch: {
      mode: 'dense',
      candidatePool: 10, // recall(limit=10) → storage.search(embedding, limit=limit): only the vector top-10 is scored
      weights: { similarity: 0.5, lexical: 0, recency: 0.3, salience: 0.2 }, // semantic_weight, recency_weight, importance_weight
      recency: { halfLifeHours: 30 * DAY_HOURS, from: 'created' }, // recency_half_life_days=30; age = utcnow() - record.created_at
      normalize: 'none',
      minSimilarity: null, // search(..., min_score=0.0)
      floor: null, // no threshold on the composite
      topK: 10, // limit: int = 10
      gateOrder: 'floor-then-topk',
      tokenBudget: null,
      refreshOnRecall: true, // touch_records(): last_accessed = now (does not enter the score)
      missingVector: 'skip',
      template: 'plain',
    },
    gaps: [
      "similarity: CrewAI scores 1/(1+_distance) with LanceDB's default L2 metric (squared Euclidean); the engine uses cosine. For unit vectors 1/(1+d) = 1/(3−2·cos), monotone in cosine, so the candidate set and the similarity order are the same but the similarity term (and so the composite) differs.",
      'records saved without an embedding carry a zero vector in LanceDB, which CrewAI still ranks (1/(1+|q|²)); recallscope shows them without a vector, so dense recall skips them.',
      'depth="deep" (the default) adds LLM query distillation, up to 3 sub-queries × 20 scopes and a confidence-routed second round; only the LLM-free shallow path is reproducible.',
      "scope filter: CrewAI filters `scope LIKE 'prefix%'`; the scope is shown as agent_id, and the engine's agent filter is an exact match.",
      'privacy: private records are dropped unless their source matches the caller (or include_private); the preset does not filter on metadata.private.',
    ],
  },
]
