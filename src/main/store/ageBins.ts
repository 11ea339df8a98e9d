/**
 * The age histogram's bins (ageHistogram, in each store): a readable bin width for the oldest age and at most
 * `maxBins` bins, then the per-bin counts the store's GROUP BY returned put in place.
 */
import type { RecallAges } from '../../shared/contract'

const NICE_BINS_H = [1, 2, 3, 6, 12, 24, 48, 72, 168, 336, 720, 1440, 2160, 4320, 8760]

/** The bin width (ms) for ages up to `maxAgeMs` in at most about `maxBins` bins: a nice number of hours, else whole years. */
export function ageBinMs(maxAgeMs: number, maxBins: number): number {
  const hours = Math.max(0, maxAgeMs) / 3_600_000 / Math.max(1, maxBins)
  const binH = NICE_BINS_H.find((h) => h >= hours) ?? Math.ceil(hours / 8760) * 8760
  return binH * 3_600_000
}

/**
 * Bins of `binMs` from age 0 to `maxAgeMs`, with the counts per bin number `b` (floor(age / binMs)). A memory
 * without a time has a NULL bin: it is in the total, in no bin (and `null >= 0` is true in JS, so it is checked).
 */
export function ageBins(counts: readonly { b: number | null; n: number | string }[], maxAgeMs: number, binMs: number): RecallAges['bins'] {
  const nb = Math.max(1, Math.floor(Math.max(0, maxAgeMs) / binMs) + 1)
  const bins = Array.from({ length: nb }, (_, i) => ({ startMs: i * binMs, endMs: (i + 1) * binMs, count: 0 }))
  for (const c of counts) if (typeof c.b === 'number' && c.b >= 0 && c.b < nb) bins[c.b].count += Number(c.n)
  return bins
}
