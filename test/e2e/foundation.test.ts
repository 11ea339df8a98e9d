import fs from 'node:fs'
import { describe, expect, it } from 'vitest'
import { chromiumPath, demoCopy, openBrowser, rendererBuilt, servedDb, shot } from './harness'
import { sha256File } from '../helpers/tmp'

const ready = chromiumPath() && rendererBuilt()
if (!ready) console.warn('e2e skipped: needs /usr/bin/chromium (apt-get install -y chromium) and a built renderer (npm run build)')

describe.skipIf(!ready)('foundation: browser mode on the demo DB', () => {
  const f = servedDb((dir) => demoCopy(dir, 2000))

  it('shows sessions, memories, and a memory detail; the DB bytes are unchanged', async () => {
    const b = await openBrowser(f.srv.url)
    const { page } = b
    try {
      await page.getByRole('listbox', { name: 'Sessions' }).getByRole('option').first().waitFor()
      const sessions = await page.getByRole('listbox', { name: 'Sessions' }).getByRole('option').count()
      expect(sessions).toBeGreaterThan(10)
      const table = page.getByRole('table', { name: 'Memories' })
      await table.locator('tbody tr[data-id]').first().waitFor()
      await expect.poll(() => page.getByTestId('table-total').textContent()).toMatch(/2,000 rows/)
      const firstRow = table.locator('tbody tr[data-id]').first()
      const id = await firstRow.getAttribute('data-id')
      await firstRow.click()
      const detail = page.getByRole('complementary', { name: 'Memory detail' })
      await detail.getByText(id!, { exact: true }).waitFor()
      const content = await detail.getByTestId('memory-content').textContent()
      expect(content?.length).toBeGreaterThan(5)
      await detail.getByText(/More like this/).waitFor()
      await shot(page, 'foundation-browse')
      // Keyboard: ArrowDown moves to the next row and opens it.
      await firstRow.focus()
      await page.keyboard.press('ArrowDown')
      const second = await table.locator('tbody tr[data-id]').nth(1).getAttribute('data-id')
      await detail.getByText(second!, { exact: true }).waitFor()
      // Filter by kind: every visible row is semantic.
      await page.getByLabel('Kind').selectOption('semantic')
      await expect.poll(async () => (await table.locator('tbody tr[data-id] .pill-kind').allTextContents()).every((k) => k === 'semantic')).toBe(true)
      // Library shows the facts with the read-only badge.
      await page.getByRole('link', { name: 'Library' }).click()
      await page.getByRole('region', { name: 'Database facts' }).getByText('read-only').waitFor()
      await shot(page, 'foundation-library')
    } finally {
      await b.close()
    }
    expect(sha256File(f.db)).toBe(f.before)
    expect(fs.existsSync(`${f.db}.recallscope`)).toBe(true)
  })
})
