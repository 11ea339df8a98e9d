/**
 * Named configs and "Pin baseline" on the Recall screen, and the why-not verdict:
 * save a config by name, pin the baseline, move topK twice and check the rank markers
 * compare with the pinned config (not the previous step); diff a saved config against
 * the screen; ask "Why (not)?" for a dropped memory and read the one-line verdict first.
 */
import { describe, expect, it } from 'vitest'
import { chromiumPath, demoCopy, openBrowser, rendererBuilt, servedDb, shot } from './harness'
import { sha256File } from '../helpers/tmp'

const ready = chromiumPath() && rendererBuilt()

describe.skipIf(!ready)('named configs, pin baseline, why-not verdict', () => {
  const f = servedDb((dir) => demoCopy(dir, 600))

  it('saves, pins, diffs, and the markers compare with the pinned config; why-not leads with its verdict', async () => {
    const b = await openBrowser(f.srv.url, { width: 1440, height: 1000 })
    const { page } = b
    try {
      await page.getByRole('link', { name: 'Recall', exact: true }).click()
      await page.getByLabel('Query (the raw utterance)').fill('deploy the tier migration')
      const kept = page.locator('.result[data-gate="kept"]')
      await kept.first().waitFor({ timeout: 20_000 })
      // the floor off and topK 10: ten injected to move the topK gate over
      const floorOn = page.getByLabel('Floor on')
      if (await floorOn.isChecked()) await floorOn.uncheck()
      await page.getByLabel('topK', { exact: true }).fill('10')
      await expect.poll(() => kept.count(), { timeout: 20_000 }).toBe(10)
      const saved = page.getByRole('region', { name: 'Saved configs' })
      await saved.getByLabel('Config name').fill('as opened')
      await saved.getByRole('button', { name: 'Save', exact: true }).click()
      await saved.locator('li[data-name="as opened"]').waitFor()
      // the same name again: a CONFLICT, offered as "Replace it"
      await saved.getByLabel('Config name').fill('as opened')
      await saved.getByRole('button', { name: 'Save', exact: true }).click()
      await saved.getByRole('button', { name: 'Replace it' }).waitFor()

      const k0 = 10
      const topK = page.getByLabel('topK', { exact: true })
      const setTopK = async (v: number) => {
        await topK.fill(String(v))
        await expect.poll(() => kept.count()).toBe(Math.min(v, k0))
      }

      // Not pinned: markers compare with the previous step (3 → 5 brings in ranks 4 and 5 as NEW).
      await setTopK(3)
      await setTopK(5)
      await expect.poll(() => page.locator('.chg.new').count()).toBe(2)

      // Pinned at topK 5: 5 → 3 → 4, and the markers compare with the pinned config: only rank 5 is OUT, nothing NEW.
      await saved.getByRole('button', { name: 'Pin baseline' }).click()
      await page.getByTestId('baseline-status').waitFor()
      await setTopK(3)
      await setTopK(4)
      await expect.poll(() => page.locator('.chg.out').count()).toBe(1)
      expect(await page.locator('.chg.new').count()).toBe(0)
      await shot(page, 'named-configs-pinned')
      // back at the pinned config: no marker at all
      await setTopK(5)
      await expect.poll(() => page.locator('.chg.out, .chg.new, .chg.up, .chg.down').count()).toBe(0)

      // Diff the saved config against the screen: topK differs (10 → 5).
      await saved.locator('li[data-name="as opened"]').getByRole('button', { name: 'Diff' }).click()
      const diff = page.getByTestId('config-diff')
      await diff.waitFor()
      await expect.poll(() => diff.textContent()).toContain('topK')
      await shot(page, 'named-configs-diff')

      // Why-not of a dropped memory: the verdict is the first line.
      await page.locator('.result[data-gate="topK"]').first().click()
      await page.getByRole('button', { name: 'Why (not)? →' }).click()
      const verdict = page.getByTestId('why-verdict')
      await verdict.waitFor({ timeout: 30_000 })
      expect(await verdict.textContent()).toMatch(/ is not injected because .*; /)
      await shot(page, 'why-not-verdict')
    } finally {
      await b.close()
    }
    expect(sha256File(f.db)).toBe(f.before)
  })
})
