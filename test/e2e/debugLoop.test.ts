/**
 * The debugging loop with no dead ends, in Chromium against browser mode:
 * eval → a case that missed a relevant memory → "why not?" (the memory's text
 * and the smallest change, under the run's config) → "Try this change" → Recall
 * opens with the change applied and shows that memory injected; then a second
 * run, compare, and the per-case snapshot diff with the "got worse" filter.
 */
import { describe, expect, it } from 'vitest'
import { chromiumPath, openBrowser, rendererBuilt, servedDb, shot } from './harness'
import { demoWithCases } from '../helpers/evalFixture'
import { sha256File } from '../helpers/tmp'

const ready = chromiumPath() && rendererBuilt()
if (!ready) console.warn('e2e skipped: needs /usr/bin/chromium (apt-get install -y chromium) and a built renderer (npm run build)')

describe.skipIf(!ready)('debugging loop: failing case → why not → try this change → recall; run compare → per-case diff', () => {
  const f = servedDb((dir) => {
    const fx = demoWithCases(dir, { memories: 1200, cases: 30 })
    fx.store.close()
    return fx.db
  })

  it('walks from a missed relevant memory to Recall injecting it, and diffs two runs case by case', async () => {
    const b = await openBrowser(f.srv.url)
    const { page } = b
    try {
      await page.getByRole('link', { name: 'Evaluate' }).click()
      await expect.poll(() => page.getByTestId('case-facets').textContent()).toMatch(/^30 cases/)

      // --- run 1: the default preset ---
      await page.getByLabel('Run name').fill('default')
      await page.getByRole('button', { name: 'Run eval' }).click()
      await page.getByRole('tab', { name: /Runs/, selected: true }).waitFor()
      const perCase = page.getByRole('table', { name: 'Per-case results' })
      await perCase.locator('tbody tr[data-id]').first().waitFor()

      // --- find a failing case: one whose detail lists a missed relevant memory with a "why not?" ---
      const detail = page.getByLabel('Case result')
      const runsTable = page.getByRole('table', { name: 'Eval runs' })
      const n = await perCase.locator('tbody tr[data-id]').count()
      /** Evaluate → Runs → the default run → case row i; the "why not?" buttons of its missed memories. */
      const openCase = async (i: number, fresh: boolean) => {
        if (fresh) {
          await page.getByRole('link', { name: 'Evaluate' }).click()
          await page.getByRole('tab', { name: /Runs/ }).click()
          await runsTable.locator('tbody tr').first().click()
          await perCase.locator('tbody tr[data-id]').first().waitFor()
        }
        await perCase.locator('tbody tr[data-id]').nth(i).click()
        await detail.locator('.mono').first().waitFor()
        // The case is fetched for its query before the buttons show.
        await page.waitForTimeout(200)
        return detail.getByRole('button', { name: /^why not / })
      }

      // --- why not? → the why-not answer for that memory under the run's config; the first one a knob can fix ---
      let tried = false
      let sawFailing = false
      let fresh = false
      for (let i = 0; i < n && !tried; i++) {
        const count = await (await openCase(i, fresh)).count()
        fresh = false
        for (let j = 0; j < count && !tried; j++) {
          const btn = (await openCase(i, fresh)).nth(j)
          fresh = true
          if (!sawFailing) await shot(page, 'loop-1-failing-case')
          sawFailing = true
          const memoryId = ((await btn.getAttribute('aria-label')) ?? '').replace(/^why not /, '').replace(/\?$/, '')
          await btn.click()
          await page.getByTestId('why-status').waitFor({ timeout: 60_000 })
          await page.getByTestId('why-summary').waitFor()
          // The memory's text and metadata, not just an id.
          expect((await page.getByTestId('why-memory-text').textContent())!.length).toBeGreaterThan(5)
          expect(await page.getByTestId('why-memory-meta').textContent()).toMatch(/created \d{4}-\d{2}-\d{2}/)
          const tryBtn = page.getByRole('button', { name: 'Try this change' })
          if ((await tryBtn.count()) === 0) continue // no single knob injects this one (e.g. far outside the pool)
          await shot(page, 'loop-2-why-not')
          await tryBtn.click()
          // --- Recall opens with the change applied and the memory highlighted: injected ---
          const hl = page.getByTestId('highlight-status')
          await expect.poll(() => hl.textContent(), { timeout: 60_000 }).toMatch(new RegExp(`Memory ${memoryId} is injected at rank \\d+`))
          expect(await hl.textContent()).toMatch(/^Applied: /)
          await shot(page, 'loop-3-recall-injected')
          tried = true
        }
      }
      expect(sawFailing).toBe(true)
      expect(tried).toBe(true)

      // --- run 2 and compare → per-case diff ---
      await page.getByRole('link', { name: 'Evaluate' }).click()
      await page.getByRole('tab', { name: /Runs/ }).click()
      await page.getByText(/Config overrides/).click()
      await page.getByLabel('Config overrides').fill('{"floor": null, "topK": 10, "mode": "hybrid"}')
      await page.getByLabel('Run name').fill('hybrid no floor')
      await page.getByRole('button', { name: 'Run eval' }).click()
      await expect.poll(() => runsTable.locator('tbody tr').count()).toBe(2)
      await page.getByLabel('Select run default').check()
      await page.getByLabel('Select run hybrid no floor').check()
      await page.getByRole('button', { name: /Compare 2 runs/ }).click()
      const cmp = page.getByRole('table', { name: 'Per-case comparison' })
      await cmp.locator('tbody tr[data-id]').first().waitFor({ timeout: 60_000 })
      await cmp.locator('tbody tr[data-id]').first().click()
      const diff = page.getByTestId('case-diff').first()
      await diff.waitFor()
      expect(await diff.textContent()).toMatch(/\d+ moved · \d+ new · \d+ dropped · relevant injected \d+ → \d+/)
      // Both sides listed; entries carry their mark.
      expect(await diff.locator('li[data-mark]').count()).toBeGreaterThan(0)
      await diff.scrollIntoViewIfNeeded()
      await shot(page, 'loop-4-case-diff')
      // "Cases that got worse": every listed case moved the wrong way on the compare metric.
      await page.getByLabel('Which cases').selectOption('worse')
      await page.waitForTimeout(300)
      const worseRows = await cmp.locator('tbody tr[data-id]').count()
      for (let i = 0; i < worseRows; i++) expect(await cmp.locator('tbody tr[data-id]').nth(i).locator('.neg').count()).toBeGreaterThan(0)
      await shot(page, 'loop-5-got-worse')
    } finally {
      await b.close()
    }
    expect(sha256File(f.db)).toBe(f.before)
  })
})
