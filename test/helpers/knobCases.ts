/**
 * Random small knob-search cases (candidates, config, mode) for the knob searches' equivalence
 * tests: values on a coarse grid so ties in score, similarity and age are common, exact twins
 * that only the id orders, every mode the search handles, both gate orders, budgets, min-max, RRF.
 */
import { getPreset, validateConfig } from '../../src/shared/presets'
import type { CandidateRaw, EffectiveMode, RecallConfig } from '../../src/shared/types'
import { mulberry32 } from '../../src/shared/random'

/** Deterministic PRNG (mulberry32) so a failure reproduces. */
export const rng = mulberry32

const HOUR = 3_600_000
const MODES: EffectiveMode[] = ['dense', 'lexical', 'hybrid', 'recency', 'keyword']

/** A random pool: values on a coarse grid so ties in score, similarity and age are common. */
export function randomCase(r: () => number): { cands: CandidateRaw[]; config: RecallConfig; mode: EffectiveMode } {
  const n = 2 + Math.floor(r() * 30)
  const q = (x: number, steps = 5) => Math.round(x * steps) / steps
  const perm = (k: number) => {
    const a = Array.from({ length: k }, (_, i) => i + 1)
    for (let i = k - 1; i > 0; i--) {
      const j = Math.floor(r() * (i + 1))
      ;[a[i], a[j]] = [a[j], a[i]]
    }
    return a
  }
  const dr = perm(n)
  const lr = perm(n)
  const rr = perm(n)
  const cands: CandidateRaw[] = Array.from({ length: n }, (_, i) => {
    const age = q(r(), 4) * 400 * HOUR
    return {
      id: `m${String(i).padStart(2, '0')}`,
      similarity: r() < 0.1 ? null : q(r() * 2 - 1, 8),
      lexical: r() < 0.4 ? 0 : q(r()),
      bm25: null,
      ageLastUsedMs: r() < 0.5 ? age : q(r(), 4) * 400 * HOUR,
      ageCreatedMs: age,
      salience: q(r()),
      denseRank: r() < 0.15 ? null : dr[i],
      lexicalRank: r() < 0.3 ? null : lr[i],
      recencyRank: rr[i],
      orderKey: rr[i],
      textLength: 1 + Math.floor(r() * 200),
      excluded: r() < 0.05,
    }
  })
  // exact twins (same features, other id and ranks): full ties that only the id breaks
  for (let i = 1; i < n; i++)
    if (r() < 0.2) {
      const a = cands[i - 1]
      Object.assign(cands[i], {
        similarity: a.similarity,
        lexical: a.lexical,
        ageLastUsedMs: a.ageLastUsedMs,
        ageCreatedMs: a.ageCreatedMs,
        salience: a.salience,
      })
    }
  const mode = MODES[Math.floor(r() * MODES.length)]
  const pick = <T>(xs: T[]) => xs[Math.floor(r() * xs.length)]
  const config: RecallConfig = validateConfig({
    ...getPreset('fieldguide').config,
    candidatePool: 1 + Math.floor(r() * n),
    fusion: { method: pick(['rrf', 'weighted'] as const), rrfK: pick([1, 60]) },
    weights: { similarity: q(r()), lexical: q(r()), recency: q(r()), salience: q(r()) },
    recency: { halfLifeHours: pick([1, 24, 168, 1000]), from: pick(['last_used', 'created'] as const) },
    normalize: pick(['none', 'none', 'minmax'] as const),
    minSimilarity: pick([null, null, -0.5, 0, 0.25]),
    floor: pick([null, null, 0.1, 0.3, 0.5]),
    topK: 1 + Math.floor(r() * 6),
    gateOrder: pick(['floor-then-topk', 'topk-then-floor'] as const),
    tokenBudget: pick([null, null, 60, 150, 400]),
    overflow: pick(['stop', 'skip'] as const),
    atLeastOne: r() < 0.5,
    tieBreak: pick(['newest', 'oldest'] as const),
  })
  return { cands, config, mode }
}
