/**
 * Assertions shared by several test files. This is the one helper module that
 * imports vitest (the lint rule in .oxlintrc.json names it): the other
 * helpers stay framework-free, so benches and scripts can use them.
 */
import { expect } from 'vitest'
import { cosine } from './mappedFixture'
import type { PgTestServer } from './pgServer'

/**
 * A recall's results are the first `k` of `rows` by an independent cosine with `q` (ties by id):
 * the same ids in the same order, and each similarity to 5 decimals.
 */
export function expectCosineTop(
  results: { id: string; features: { similarity: number | null } }[],
  q: number[],
  rows: { id: string; vec: number[] }[],
  k = 10,
): void {
  const expected = rows
    .map((r) => ({ id: r.id, sim: cosine(q, r.vec) }))
    .sort((a, b) => b.sim - a.sim || (a.id < b.id ? -1 : 1))
    .slice(0, k)
  expect(results.map((r) => r.id)).toEqual(expected.map((x) => x.id))
  results.forEach((r, i) => expect(r.features.similarity).toBeCloseTo(expected[i].sim, 5))
}

/** Nothing but reads reached the server since its log was last cleared: SELECT / SET / SHOW, transaction control, WITH, EXPLAIN. */
export async function expectOnlyReads(srv: PgTestServer): Promise<void> {
  const sent = (await srv.statements()).map((x) =>
    x
      .trim()
      .replace(/^\(+\s*/, '')
      .split(/\s+/)[0]
      .toUpperCase(),
  )
  expect(sent.length).toBeGreaterThan(0)
  expect(sent.filter((k) => !['SELECT', 'SET', 'SHOW', 'BEGIN', 'COMMIT', 'ROLLBACK', 'RESET', 'WITH', 'EXPLAIN'].includes(k))).toEqual([])
}
