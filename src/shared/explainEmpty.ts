/**
 * Why a recall injected nothing, and the knob that changes it. An empty recall
 * is sometimes the right answer; often it is a gate set for another embedder
 * (the default preset's floor 0.35 drops every candidate when the only
 * embedder is the offline hashing one). This names the gate that dropped
 * everything, by how much the best candidate missed it, and a change — checked
 * by re-scoring with `rerank` — that would inject something.
 *
 * Pure (no Node, no DOM): the engine puts it on every trace, the renderer
 * recomputes it after a local re-rank, the CLI and the eval case detail print it.
 */
import type { PartialRecallConfig } from './config'
import { rerank } from './scoring'
import type { CandidateRaw, EffectiveMode, EmptyExplanation, GateName, RecallConfig, TraceDropped } from './types'

export type { EmptyExplanation } from './types'

export interface EmptyInput {
  results: readonly unknown[]
  dropped: readonly TraceDropped[]
  candidates: readonly CandidateRaw[]
  config: RecallConfig
  mode: EffectiveMode | undefined
  inScope?: number
  degradedReason?: string | null
}

const f3 = (x: number) => x.toFixed(3)
/** Round down to 2 decimals: a threshold the best value still passes (gates keep value ≥ threshold). */
const down2 = (x: number) => Math.floor(x * 100 + 1e-9) / 100

const GATE_WORD: Record<GateName, string> = {
  scope: 'out of scope',
  dedupe: 'already in the live transcript',
  minSimilarity: 'below minSimilarity',
  floor: 'below the floor',
  topK: 'past topK',
  budget: 'over the token budget',
}

/** A suggested change checked by re-ranking the candidates under it: null when it still injects nothing. */
type Verify = (patch: PartialRecallConfig, label: string) => EmptyExplanation['suggestion']

/** What the per-gate explanations share. */
interface EmptyCtx {
  t: EmptyInput
  cfg: RecallConfig
  base: { byGate: Partial<Record<GateName, number>>; candidates: number }
  /** "All N candidates were dropped (…)" */
  all: string
  verify: Verify
}

/** The explanation of an empty recall; null when something was injected. */
export function explainEmpty(t: EmptyInput): EmptyExplanation | null {
  if (t.results.length > 0) return null
  const cfg = t.config
  const mode = t.mode ?? cfg.mode
  const byGate: Partial<Record<GateName, number>> = {}
  for (const d of t.dropped) byGate[d.gate] = (byGate[d.gate] ?? 0) + 1
  const n = t.dropped.length
  const base = { byGate, candidates: n }
  const verify: Verify = (patch, label) => {
    const next = mergePatch(cfg, patch)
    const r = rerank(t.candidates, next, mode)
    return r.results.length > 0 ? { patch, label, wouldInject: r.results.length } : null
  }
  const early = explainBeforeGates(t, mode, base, verify)
  if (early) return early

  // The deciding gate: the one that dropped the best-ranked candidate (what a relaxed knob must get past first).
  const top = [...t.dropped].sort((a, b) => (a.scoreRank ?? 0) - (b.scoreRank ?? 0))[0]
  const counts = Object.entries(byGate)
    .map(([g, c]) => `${c} ${GATE_WORD[g as GateName]}`)
    .join(', ')
  const ctx: EmptyCtx = { t, cfg, base, all: `All ${n} candidate${n === 1 ? '' : 's'} were dropped (${counts})`, verify }
  switch (top.gate) {
    case 'floor':
      return explainFloor(ctx)
    case 'minSimilarity':
      return explainMinSimilarity(ctx)
    case 'budget':
      return explainBudget(ctx)
    case 'dedupe':
      return {
        ...base,
        gate: 'dedupe',
        best: null,
        threshold: null,
        message: `${ctx.all}. Every kept memory is already in the live transcript (dedupe): nothing new to inject, which is correct.`,
        suggestion: null,
      }
    default: {
      const s = verify({ topK: Math.max(1, cfg.topK) + 5 }, `topK → ${cfg.topK + 5}`)
      return { ...base, gate: top.gate, best: null, threshold: null, message: `${ctx.all}.`, suggestion: s }
    }
  }
}

/** Empty before any gate: nothing in scope, no arm ran, no candidate reached the pool, or topK is 0. Null otherwise. */
function explainBeforeGates(t: EmptyInput, mode: EffectiveMode, base: EmptyCtx['base'], verify: Verify): EmptyExplanation | null {
  const cfg = t.config
  if (t.inScope === 0)
    return {
      ...base,
      gate: 'scope',
      best: null,
      threshold: null,
      message: 'Nothing is in scope: no memory matches the scope filters (agent / user / session, tiers, kinds, roles, dates). Widen the scope.',
      suggestion: null,
    }
  if (mode === 'none')
    return {
      ...base,
      gate: 'arm',
      best: null,
      threshold: null,
      message: `No retrieval arm could run${t.degradedReason ? ` (${t.degradedReason})` : ''}: switch mode to lexical or turn on keywordFallback.`,
      // The similarity weight moves to lexical: a lexical recall that keeps lexical at 0 scores nothing (issue 25).
      // Not verifiable here (no arm ran, so no candidates): wouldInject 0 says so; the page re-runs it before offering it.
      suggestion: {
        patch: { mode: 'lexical', weights: { ...cfg.weights, similarity: 0, lexical: cfg.weights.lexical + cfg.weights.similarity } },
        label: `mode → lexical, lexical weight → ${(cfg.weights.lexical + cfg.weights.similarity).toFixed(2)}`,
        wouldInject: 0,
      },
    }
  if (t.dropped.length === 0)
    return {
      ...base,
      gate: 'pool',
      best: null,
      threshold: null,
      message: `No candidate reached the pool: the ${mode} arm matched nothing for this query${mode === 'lexical' ? ' (no query word occurs in scope)' : ''}. Try another mode (hybrid uses both arms).`,
      suggestion: null,
    }
  if (cfg.topK === 0)
    return {
      ...base,
      gate: 'topK',
      best: null,
      threshold: 0,
      message: `topK is 0: nothing can be injected. Raise topK.`,
      suggestion: verify({ topK: 5 }, 'topK → 5'),
    }
  return null
}

/** The floor decided: the best score and how far below the floor it is. */
function explainFloor({ t, cfg, base, all, verify }: EmptyCtx): EmptyExplanation {
  const best = Math.max(...t.dropped.filter((d) => d.gate === 'floor').map((d) => d.score))
  const floor = cfg.floor ?? 0
  const to = down2(best)
  const s = verify({ floor: to }, `floor → ${to.toFixed(2)}`) ?? verify({ floor: null }, 'floor → off')
  return {
    ...base,
    gate: 'floor',
    best,
    threshold: floor,
    message: `${all}. The floor decided: the best score is ${f3(best)}, ${f3(floor - best)} below floor ${f3(floor)}. Lower the floor to ${to.toFixed(2)} (or turn it off)${s ? ` to inject ${s.wouldInject}` : ''}.`,
    suggestion: s,
  }
}

/** minSimilarity decided: the best cosine of the rows it dropped (none when no row has a vector). */
function explainMinSimilarity({ t, cfg, base, all, verify }: EmptyCtx): EmptyExplanation {
  const cands = new Map(t.candidates.map((c) => [c.id, c]))
  const sims = t.dropped.filter((d) => d.gate === 'minSimilarity').map((d) => cands.get(d.id)?.similarity ?? null)
  const known = sims.filter((x): x is number => x !== null)
  const best = known.length ? Math.max(...known) : null
  const ms = cfg.minSimilarity ?? 0
  const s =
    (best !== null ? verify({ minSimilarity: down2(best) }, `minSimilarity → ${down2(best).toFixed(2)}`) : null) ??
    verify({ minSimilarity: null }, 'minSimilarity → off')
  return {
    ...base,
    gate: 'minSimilarity',
    best,
    threshold: ms,
    message:
      best === null
        ? `${all}. minSimilarity decided: no candidate has a vector to compare, so none can pass minSimilarity ${f3(ms)}. Turn minSimilarity off${s ? ` to inject ${s.wouldInject}` : ''}.`
        : `${all}. minSimilarity decided: the best cosine is ${f3(best)}, ${f3(ms - best)} below minSimilarity ${f3(ms)}. Lower it to ${down2(best).toFixed(2)} (or turn it off)${s ? ` to inject ${s.wouldInject}` : ''}.`,
    suggestion: s,
  }
}

/** The token budget decided: the smallest dropped row and how far over the budget it is. */
function explainBudget({ t, cfg, base, all, verify }: EmptyCtx): EmptyExplanation {
  const min = Math.min(...t.dropped.filter((d) => d.gate === 'budget').map((d) => d.tokens))
  const b = cfg.tokenBudget ?? 0
  const s = verify({ tokenBudget: min }, `tokenBudget → ${min}`) ?? verify({ atLeastOne: true }, 'atLeastOne → on')
  return {
    ...base,
    gate: 'budget',
    best: min,
    threshold: b,
    message: `${all}. The token budget decided: the smallest candidate needs ${min} tokens, ${min - b} over the budget of ${b}. Raise tokenBudget to ${min} (or turn on atLeastOne)${s ? ` to inject ${s.wouldInject}` : ''}.`,
    suggestion: s,
  }
}

/** A shallow-by-field merge (gate knobs are top-level scalars). */
function mergePatch(cfg: RecallConfig, patch: PartialRecallConfig): RecallConfig {
  return { ...cfg, ...(patch as Partial<RecallConfig>) }
}
