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
    name: 'mcp-memory-service',
    framework: 'mcp-memory-service (sqlite-vec backend)',
    label: 'mcp-memory-service — hybrid search',
    description:
      'search_memories(mode="hybrid", limit=10) → retrieve_hybrid: BM25 (its trigram FTS) and vector top n_results·2 = 20 each, fused by weighted average 0.3·keyword + 0.7·semantic, sorted, first 10; superseded and deleted memories left out.',
    source:
      'doobidoo/mcp-memory-service @ 2e193783594cc9292682fcf4789328a6badbfd7d: src/mcp_memory_service/config.py (MCP_HYBRID_FUSION_METHOD=weighted_average, MCP_HYBRID_KEYWORD_WEIGHT=0.3, MCP_HYBRID_SEMANTIC_WEIGHT=0.7, MCP_HYBRID_RRF_K=60, MCP_HYBRID_RRF_CONSENSUS_BOOST=0.1); storage/sqlite_vec.py (retrieve_hybrid, _fuse_scores, _normalize_bm25_score, _search_bm25, retrieve); storage/base.py (search_memories limit=10)',
    patch: {
      mode: 'hybrid',
      candidatePool: 20, // retrieve_hybrid: _search_bm25(query, n_results * 2) and retrieve(query, n_results * 2), n_results = limit = 10
      fusion: { method: 'weighted', rrfK: 60 }, // MCP_HYBRID_FUSION_METHOD default 'weighted_average'
      weights: { similarity: 0.7, lexical: 0.3, recency: 0, salience: 0 }, // MCP_HYBRID_SEMANTIC_WEIGHT, MCP_HYBRID_KEYWORD_WEIGHT
      normalize: 'none',
      minSimilarity: null,
      floor: null,
      topK: 10, // merged_results[:n_results]
      tokenBudget: null,
      refreshOnRecall: false,
      missingVector: 'skip',
      template: 'plain',
    },
    gaps: [
      'semantic score: it uses 1 − cosine_distance/2 = (1+cos)/2 for memories in the vector list and 0 for BM25-only ones; the engine uses cosine. Same order for a dense-only ranking, different fused scores.',
      'keyword score: it maps FTS5 bm25 (negative, more negative = better) through clamp(1 + bm25/10, 0, 1), which gives the strongest matches the lowest score; the engine uses −bm25 / max(−bm25) (best match = 1). No config reproduces that inversion.',
      'keyword query: it searches the sanitised query as one quoted phrase (a substring over the trigram index); the engine ORs the query words over the same table.',
      'MCP_HYBRID_FUSION_METHOD=rrf: 1/(60+rank) per list plus a consensus boost of 0.1 for memories in both lists; the engine has RRF (k=60, same order without the boost) but no consensus boost.',
      'quality_boost, tag filters and time expressions of search_memories are not modelled.',
    ],
  },
  {
    name: 'mcp-memory-service:rrf',
    framework: 'mcp-memory-service (sqlite-vec backend), MCP_HYBRID_FUSION_METHOD=rrf',
    label: 'mcp-memory-service — hybrid search, RRF',
    description:
      'retrieve_hybrid with MCP_HYBRID_FUSION_METHOD=rrf: 20 per arm, score = Σ 1/(60 + rank) over both lists + 0.1 when a memory is in both, first 10. The engine sums (k+1)/(k+rank) with no boost: the same order (with 20 per list a memory in both lists always outscores one in a single list), scaled scores.',
    source:
      'doobidoo/mcp-memory-service @ 2e193783594cc9292682fcf4789328a6badbfd7d: src/mcp_memory_service/config.py (MCP_HYBRID_RRF_K=60, MCP_HYBRID_RRF_CONSENSUS_BOOST=0.1); storage/sqlite_vec.py (_fuse_rrf, retrieve_hybrid)',
    patch: {
      mode: 'hybrid',
      candidatePool: 20, // n_results * 2 per list
      fusion: { method: 'rrf', rrfK: 60 }, // MCP_HYBRID_RRF_K
      weights: { similarity: 1, lexical: 1, recency: 0, salience: 0 }, // both lists count alike
      normalize: 'none',
      minSimilarity: null,
      floor: null,
      topK: 10, // ranked[:n_results]
      tokenBudget: null,
      refreshOnRecall: false,
      missingVector: 'skip',
      template: 'plain',
    },
    gaps: [
      'scores: the engine reports (61/(60+rank)) per list and no +0.1 consensus boost; the order is the same (a memory in both top-20 lists scores at least 2/80 > 1/61), the numbers are 61× and without the boost.',
      "keyword list: for a one-word query its quoted phrase and the engine's word query match the same rows of the same trigram index; for several words it searches the phrase, the engine ORs the words.",
      'superseded memories: its RRF path fetches keyword-only hits without the superseded filter, so they can come back; the engine leaves them out (tier archived).',
    ],
  },
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
  {
    name: 'agno',
    framework: 'Agno (agno SqliteDb: agno_memories)',
    label: 'Agno — memories in context',
    description:
      "Agent(add_memories_to_context=True): get_system_message puts every memory of the run's user (MemoryManager.get_user_memories(user_id)) into the system message as '- <memory>' lines of a <memories_from_previous_interactions> block; no query, no ranking, no limit.",
    source:
      'agno-agi/agno libs/agno/agno/agent/agent.py get_system_message (memories block), libs/agno/agno/memory/manager.py @ 0060f5db (get_user_memories, search_user_memories: last_n by updated_at)',
    patch: {
      mode: 'recency',
      scope: { tiers: ['working', 'long_term'], kinds: ['semantic'] },
      candidatePool: 100_000, // every memory of the user
      weights: { similarity: 0, lexical: 0, recency: 1, salience: 0 },
      recency: { halfLifeHours: 7 * DAY_HOURS, from: 'created' },
      normalize: 'none',
      minSimilarity: null,
      floor: null,
      topK: 100_000, // no limit: get_user_memories returns them all
      tokenBudget: null,
      refreshOnRecall: false,
      template: 'plain',
    },
    gaps: [
      'order: Agno lists the memories in table order (oldest first); the engine lists them newest first. The set is the same.',
      "template: Agno's block is '<memories_from_previous_interactions>' with '- ' lines and a note to prefer the conversation; the context block here uses the plain template.",
      'search_user_memories (the agentic tool, retrieval_method last_n / first_n / agentic) is not modelled: last_n sorts by updated_at, which recallscope keeps in metadata; agentic asks an LLM.',
    ],
    requires: ['userId'],
  },
  {
    name: 'mastra',
    framework: 'Mastra memory (@mastra/memory, LibSQLStore)',
    label: 'Mastra — last messages',
    description:
      "Memory with the default options: the thread's lastMessages = 10 most recent messages are loaded into context (semanticRecall off by default). Working memory, when enabled, is added to the system prompt whole (shown here as a pinned memory).",
    source: 'mastra-ai/mastra packages/core/src/memory/memory.ts (memoryDefaultOptions: lastMessages 10, semanticRecall false)',
    patch: {
      mode: 'recency',
      scope: { tiers: ['working', 'long_term'], kinds: ['episodic'] },
      candidatePool: 100_000,
      weights: { similarity: 0, lexical: 0, recency: 1, salience: 0 },
      recency: { halfLifeHours: 7 * DAY_HOURS, from: 'created' },
      normalize: 'none',
      minSimilarity: null,
      floor: null,
      topK: 10, // lastMessages: 10
      tokenBudget: null,
      refreshOnRecall: false,
      template: 'plain',
    },
    gaps: [
      'order: Mastra hands the messages back oldest first; the engine lists them newest first (same set).',
      'working memory is always in context in Mastra; here it is a pinned memory outside this preset (kinds episodic).',
    ],
    requires: ['sessionId'],
  },
  {
    name: 'mastra:semantic',
    framework: 'Mastra memory (@mastra/memory, semanticRecall enabled)',
    label: 'Mastra — semantic recall',
    description:
      'semanticRecall: true → SemanticRecall processor: the topK = 4 messages of the resource most similar to the new message (vector index memory_messages), each with messageRange = 1 message around it.',
    source: 'mastra-ai/mastra packages/memory/src/processors/semantic-recall.ts (topK 4, messageRange 1, scope resource)',
    patch: {
      mode: 'dense',
      scope: { tiers: ['working', 'long_term'], kinds: ['episodic'] },
      candidatePool: 30,
      weights: { similarity: 1, lexical: 0, recency: 0, salience: 0 },
      normalize: 'none',
      minSimilarity: null,
      floor: null,
      topK: 4, // topK: 4
      tokenBudget: null,
      refreshOnRecall: false,
      template: 'plain',
    },
    gaps: [
      'messageRange: Mastra adds 1 message before and after each hit from the same thread; the engine returns the hits only.',
      'a message embedded in several chunks is matched by its best chunk in Mastra; recallscope keeps the first chunk as the message vector.',
    ],
    requires: ['userId'],
  },
]
