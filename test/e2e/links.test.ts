/**
 * Links and state (issue 25, first part), as a person uses them in Chromium against browser mode:
 * a screen keeps its state when you leave it and come back through the nav; "Copy link" copies an
 * address that opens the same state in another tab of the same browser (the token is kept per
 * browser for the server run); a browser without the token gets one plain instruction.
 */
import { describe, expect, it } from 'vitest'
import { chromiumPath, demoCopy, openBrowser, rendererBuilt, servedDb, shot } from './harness'

const ready = chromiumPath() && rendererBuilt()
if (!ready) console.warn('e2e skipped: needs /usr/bin/chromium (apt-get install -y chromium) and a built renderer (npm run build)')

describe.skipIf(!ready)('links and state (browser mode, demo DB)', () => {
  const f = servedDb((dir) => demoCopy(dir, 2000))

  it('keeps a screen’s state across nav, copies a link that opens it in another tab, and explains a missing token', async () => {
    const b = await openBrowser(f.srv.url)
    const { page, context } = b
    try {
      await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: new URL(f.srv.url).origin })
      await page.getByRole('table', { name: 'Memories' }).locator('tbody tr[data-id]').first().waitFor()
      await page.getByRole('link', { name: 'Recall', exact: true }).click()
      const query = page.getByLabel('Query (the raw utterance)')
      await query.fill('deploy the tier migration')
      await page.locator('.result[data-gate="kept"]').first().waitFor({ timeout: 20_000 })
      await expect.poll(() => page.url()).toMatch(/query=deploy/)

      // away and back through the nav: the query is still there
      await page.getByRole('link', { name: 'Memories', exact: true }).click()
      await page.getByRole('table', { name: 'Memories' }).locator('tbody tr[data-id]').first().waitFor()
      await page.getByRole('link', { name: 'Recall', exact: true }).click()
      await expect.poll(() => query.inputValue()).toBe('deploy the tier migration')
      await page.locator('.result[data-gate="kept"]').first().waitFor({ timeout: 20_000 })

      // Copy link → another tab of this browser opens the same state (no token in the link)
      await page.getByRole('button', { name: 'Copy link' }).click()
      await expect.poll(() => page.getByRole('button', { name: 'Link copied' }).count()).toBe(1)
      const link = await page.evaluate<string>('navigator.clipboard.readText()')
      expect(link).toMatch(/#\/recall\?.*query=deploy/)
      expect(link).not.toMatch(/token=/)
      const tab = await context.newPage()
      await tab.goto(link)
      await expect.poll(() => tab.getByLabel('Query (the raw utterance)').inputValue(), { timeout: 20_000 }).toBe('deploy the tier migration')
      await tab.locator('.result[data-gate="kept"]').first().waitFor({ timeout: 20_000 })
      await shot(tab, 'links-1-copied-link-in-new-tab')
      await tab.close()

      // another browser (no token kept): one plain instruction, not "no database open"
      const other = await openBrowser(link)
      try {
        await expect.poll(() => other.page.locator('.error').textContent(), { timeout: 20_000 }).toMatch(/no valid access token.*#token=/)
        await shot(other.page, 'links-2-no-token')
      } finally {
        await other.close()
      }
    } finally {
      await b.close()
    }
  })
})
