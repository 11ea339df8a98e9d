/**
 * Weight editing. On the simplex the four weights always sum to 1: moving one
 * slider to v shares 1 − v among the others in proportion to their current
 * values (equally when they are all 0). Free mode moves one weight alone.
 */
import type { FeatureName, RecallConfig, Weights } from '../../../../shared/types'

export const FEATURES: readonly FeatureName[] = ['similarity', 'lexical', 'recency', 'salience']

export function moveWeight(w: Weights, key: FeatureName, value: number, simplex: boolean): Weights {
  const v = Math.min(simplex ? 1 : Number.MAX_VALUE, Math.max(0, value))
  if (!simplex) return { ...w, [key]: v }
  const others = FEATURES.filter((k) => k !== key)
  const rest = others.reduce((s, k) => s + w[k], 0)
  const out = { ...w, [key]: v }
  for (const k of others) out[k] = rest > 0 ? ((1 - v) * w[k]) / rest : (1 - v) / others.length
  return out
}

/**
 * The weights after a mode change: a single-arm mode cannot score the other arm's feature, so
 * when the new mode's own weight is 0 the other arm's weight moves onto it (dense ↔ lexical).
 * Without this, switching a preset that scores only similarity to lexical scores every
 * candidate by recency and salience alone (issue 25: everything fell under the floor).
 */
export function weightsForMode(w: Weights, mode: RecallConfig['mode']): Weights {
  if (mode === 'lexical' && w.lexical === 0 && w.similarity > 0) return { ...w, lexical: w.similarity, similarity: 0 }
  if (mode === 'dense' && w.similarity === 0 && w.lexical > 0) return { ...w, similarity: w.lexical, lexical: 0 }
  return w
}

/** Scale weights onto the simplex (sum 1); all-zero becomes uniform. */
export function toSimplex(w: Weights): Weights {
  const s = FEATURES.reduce((a, k) => a + w[k], 0)
  const out = { ...w }
  for (const k of FEATURES) out[k] = s > 0 ? w[k] / s : 1 / FEATURES.length
  return out
}

export function onSimplex(w: Weights, eps = 1e-9): boolean {
  return Math.abs(FEATURES.reduce((a, k) => a + w[k], 0) - 1) < eps
}

/** Half-life slider: position 0..1000 ↔ 1 hour … 1 year, log scale. */
const H_MIN = 1
const H_MAX = 24 * 365
export function halfLifeToPos(hours: number): number {
  return Math.round((1000 * Math.log(Math.min(H_MAX, Math.max(H_MIN, hours)) / H_MIN)) / Math.log(H_MAX / H_MIN))
}
export function posToHalfLife(pos: number): number {
  const h = H_MIN * Math.pow(H_MAX / H_MIN, pos / 1000)
  // Snap to tidy values: whole hours below 2 days, tenths of a day above.
  return h < 48 ? Math.round(h) : Math.round((h / 24) * 10) * 2.4
}

export function fmtHours(h: number): string {
  if (h < 48) return `${h.toFixed(0)} h`
  const d = h / 24
  return d < 60 ? `${d.toFixed(1)} d` : `${(d / 30.4).toFixed(1)} mo`
}
