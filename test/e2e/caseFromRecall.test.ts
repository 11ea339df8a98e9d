/**
 * "Save as eval case" on the Recall screen opens the one case editor (the Cases
 * tab's) in a dialog, started from the recall: its query, scope and results to grade.
 */
import { describe, expect, it } from 'vitest'
import { chromiumPath, demoCopy, openBrowser, rendererBuilt, servedDb, shot } from './harness'
import { sha256File } from '../helpers/tmp'

const ready = chromiumPath() && rendererBuilt()

describe.skipIf(!ready)('a case from a recall', () => {
  const f = servedDb((dir) => demoCopy(dir, 600))

  it('opens the case editor with the recall’s query and results, grades one and saves; the DB is unchanged', async () => {
    const b = await openBrowser(f.srv.url)
    const { page } = b
    try {
      await page.getByRole('link', { name: 'Recall', exact: true }).click()
      await page.getByLabel('Query (the raw utterance)').fill('deploy the tier migration')
      await page.locator('.result[data-gate="kept"]').first().waitFor({ timeout: 20_000 })
      await page.getByRole('button', { name: 'Save as eval case' }).click()
      const dialog = page.getByRole('dialog', { name: 'New eval case' })
      await expect.poll(() => dialog.getByLabel('Case query').inputValue()).toBe('deploy the tier migration')
      const list = dialog.getByRole('list', { name: 'Grade the recalled memories' })
      await list.locator('li').first().waitFor()
      await list.locator('li').first().getByRole('button', { name: '3' }).click()
      await shot(page, 'case-from-recall')
      await dialog.getByRole('button', { name: 'Save case' }).click()
      await page
        .getByRole('status')
        .filter({ hasText: /saved case-/ })
        .waitFor()
    } finally {
      await b.close()
    }
    expect(sha256File(f.db)).toBe(f.before)
  })
})
