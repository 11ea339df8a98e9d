/**
 * The per-list bounds top-k BM25 prunes with (bm25Top.ts): a postings list's largest per-row factor
 * and the largest of each block of BLOCK postings. Pure functions of the list, cached per list object
 * (a list lives as long as its index version). A background build computes them for its longest lists
 * (bm25.ts, `warmLongLists`), so the first query with a word most rows hold does not pay for them.
 */
import type { Postings } from './bm25Index'

/** Postings per block for the block maxima. */
export const BLOCK = 64

/** Largest per-row factor of a postings list (cached: the lists live as long as their index). */
const maxFactor = new WeakMap<Postings, number>()
export function maxFactorOf(p: Postings): number {
  let m = maxFactor.get(p)
  if (m === undefined) {
    m = 0
    for (let j = 0; j < p.tf.length; j++) if (p.tf[j] > m) m = p.tf[j]
    maxFactor.set(p, m)
  }
  return m
}

/** Largest per-row factor of each block of BLOCK postings (cached like maxFactor). */
const blockMax = new WeakMap<Postings, Float64Array>()
export function blockMaxOf(p: Postings): Float64Array {
  let bm = blockMax.get(p)
  if (!bm) {
    bm = new Float64Array(Math.ceil(p.tf.length / BLOCK))
    for (let j = 0; j < p.tf.length; j++) if (p.tf[j] > bm[(j / BLOCK) | 0]) bm[(j / BLOCK) | 0] = p.tf[j]
    blockMax.set(p, bm)
  }
  return bm
}

/** Are a list's bounds computed already? (tests read it) */
export function hasBounds(p: Postings): boolean {
  return maxFactor.has(p) && blockMax.has(p)
}
