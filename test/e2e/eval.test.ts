/**
 * Evaluate, end to end in Chromium against browser mode: create a case by
 * running a recall and grading it, run an eval, run a second config, compare
 * the two runs, run a short tune and apply its config (a third run appears).
 */
import { describe, expect, it } from 'vitest'
import { chromiumPath, openBrowser, rendererBuilt, servedDb, shot } from './harness'
import { demoWithCases } from '../helpers/evalFixture'
import { sha256File } from '../helpers/tmp'

const ready = chromiumPath() && rendererBuilt()
if (!ready) console.warn('e2e skipped: needs /usr/bin/chromium (apt-get install -y chromium) and a built renderer (npm run build)')

describe.skipIf(!ready)('evaluate: cases, runs, compare, tune', () => {
  const f = servedDb((dir) => {
    const fx = demoWithCases(dir, { memories: 1200, cases: 40 })
    fx.store.close()
    return fx.db
  })

  it('creates a case from a recall, runs and compares evals, tunes and applies the config', async () => {
    const b = await openBrowser(f.srv.url)
    const { page } = b
    try {
      await page.getByRole('link', { name: 'Evaluate' }).click()
      await expect.poll(() => page.getByTestId('case-facets').textContent()).toMatch(/^40 cases/)

      // --- a case from a recall: query → Find candidates → grade → save ---
      await page.getByRole('button', { name: 'New case' }).click()
      const editor = page.getByRole('complementary', { name: 'Case editor' })
      await editor.getByLabel('Case query').fill('deploy the release to staging')
      await editor.getByLabel('Case agent').selectOption({ index: 1 })
      await editor.getByRole('button', { name: 'Find candidates' }).click()
      const list = editor.getByRole('list', { name: 'Grade the recalled memories' })
      await list.locator('li').first().waitFor()
      expect(await list.locator('li').count()).toBeGreaterThan(3)
      await list.locator('li').nth(0).getByRole('button', { name: '3' }).click()
      await list.locator('li').nth(1).getByRole('button', { name: '1' }).click()
      await shot(page, 'eval-case-editor')
      await editor.getByRole('button', { name: 'Save case' }).click()
      await expect.poll(() => page.getByTestId('case-facets').textContent()).toMatch(/^41 cases/)
      await editor.getByRole('heading', { name: /^Case case-/ }).waitFor()

      // --- run 1: the preset as is ---
      await page.getByLabel('Run name').fill('fieldguide')
      await page.getByRole('button', { name: 'Run eval' }).click()
      await page.getByRole('tab', { name: /Runs/, selected: true }).waitFor()
      const metrics = page.getByTestId('run-metrics')
      await metrics.getByText('ndcg@10').waitFor()
      await page.getByRole('table', { name: 'Per-case results' }).locator('tbody tr[data-id]').first().waitFor()
      await page.getByRole('table', { name: 'Per-case results' }).locator('tbody tr[data-id]').first().click()
      await page.getByLabel('Case result').locator('.mono').first().waitFor()
      // the run's timings by phase, under its counts
      await page.getByText(/where the time went: query vectors \d+ · scope \d+ · dense \d+ · lexical \d+ · features \d+ · fusion \d+ · metrics \d+/).waitFor()
      await shot(page, 'eval-run')

      // --- run 2: no floor ---
      await page.getByText(/Config overrides/).click()
      await page.getByLabel('Config overrides').fill('{"floor": null, "topK": 10}')
      await page.getByLabel('Run name').fill('no floor')
      await page.getByRole('button', { name: 'Run eval' }).click()
      const runsTable = page.getByRole('table', { name: 'Eval runs' })
      await expect.poll(() => runsTable.locator('tbody tr').count()).toBe(2)

      // --- compare the two (the older run is the baseline) ---
      await page.getByLabel('Select run fieldguide').check()
      await page.getByLabel('Select run no floor').check()
      // the ticks are in the address: a reload keeps them
      await expect.poll(() => new URL(page.url()).hash).toMatch(/checked=[^&]+%2C|checked=[^&]+,/)
      await page.reload()
      await expect.poll(() => page.getByLabel('Select run fieldguide').isChecked(), { timeout: 20_000 }).toBe(true)
      expect(await page.getByLabel('Select run no floor').isChecked()).toBe(true)
      await page.getByRole('button', { name: /Compare 2 runs/ }).click()
      const summary = page.getByRole('table', { name: 'Comparison summary' })
      await summary.waitFor()
      const cells = await summary.locator('tbody tr').nth(1).locator('td').allTextContents()
      // wins + losses + ties = cases compared
      const [cases, wins, losses, ties] = [cells[1], cells[5], cells[6], cells[7]].map(Number)
      expect(wins + losses + ties).toBe(cases)
      await page.getByText(/the baseline on ndcg@10/).waitFor()
      await shot(page, 'eval-compare')

      // --- tune (short) and apply ---
      await page.getByRole('tab', { name: 'Tune' }).click()
      await page.getByLabel('Configs to try').fill('80')
      await page.getByRole('button', { name: 'Start tuning' }).click()
      const tt = page.getByRole('table', { name: 'Train and test scores' })
      await tt.waitFor({ timeout: 60_000 })
      expect(await page.getByTestId('tune-test').textContent()).toMatch(/\d\.\d{3}/)
      await page.getByRole('img', { name: /over the weights of/ }).waitFor()
      await shot(page, 'eval-tune')
      await page.getByRole('button', { name: 'Apply this config' }).click()
      await page.getByRole('tab', { name: /Runs/, selected: true }).waitFor()
      await expect.poll(() => runsTable.locator('tbody tr').count()).toBe(3)
      await runsTable.getByText(/^tuned recall@10/).waitFor()
      // The applied config is the one under test now.
      expect(await page.getByLabel('Config overrides').inputValue()).toMatch(/"weights"/)
      await shot(page, 'eval-applied')
      // The tune was saved: listed beside the runs, and reopens in the Tune tab.
      const saved = page.getByRole('region', { name: 'Saved tune reports' })
      await saved.getByRole('button', { name: 'Open' }).first().click()
      await page.getByRole('tab', { name: 'Tune', selected: true }).waitFor()
      await page.getByTestId('tune-verdict').waitFor()
      expect(await page.getByTestId('tune-split').textContent()).toMatch(/^Split by conversation \(scope\.agentId\)/)
    } finally {
      await b.close()
    }
    expect(sha256File(f.db)).toBe(f.before)
  })
})
