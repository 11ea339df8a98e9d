/**
 * "Any table by mapping" in the browser (issue 14 item 7): an unknown SQLite file typed
 * into the Library opens the mapping dialog, the preview follows the selects, Open
 * browses the rows; the file's bytes never change.
 */
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { chromiumPath, openBrowser, rendererBuilt, serve, shot, type Served } from './harness'
import { buildMappedFixture, type FixtureRow } from '../helpers/mappedFixture'
import { sha256File, tmpDir } from '../helpers/tmp'

const ready = chromiumPath() && rendererBuilt()
if (!ready) console.warn('e2e skipped: needs /usr/bin/chromium (apt-get install -y chromium) and a built renderer (npm run build)')

describe.skipIf(!ready)('mapping dialog', () => {
  let t: ReturnType<typeof tmpDir>
  let srv: Served
  let db: string
  let rows: FixtureRow[]
  let before: string
  beforeAll(async () => {
    t = tmpDir()
    db = path.join(t.dir, 'notes.sqlite')
    rows = buildMappedFixture(db)
    before = sha256File(db)
    srv = await serve([])
  })
  afterAll(async () => {
    await srv?.stop()
    t?.cleanup()
  })

  it('an unknown DB opens the dialog; the preview follows the selects; Open browses the rows', async () => {
    const b = await openBrowser(srv.url)
    const { page } = b
    try {
      await page.getByRole('link', { name: 'Library' }).click()
      await page.getByLabel('Database path').fill(db)
      await page.getByLabel('Database path').press('Enter')
      const dlg = page.getByRole('dialog', { name: 'Open a table by mapping' })
      await dlg.waitFor()
      // Pre-filled from the suggestion: the biggest table, its longest text column as content, the 32-byte BLOB as vector.
      await expect.poll(() => dlg.getByLabel('Table').inputValue()).toBe('Agent Notes "v2"')
      await expect.poll(() => dlg.getByLabel('Column for content').inputValue()).toBe('Body Text')
      await expect.poll(() => dlg.getByLabel('Column for vector').inputValue()).toBe('Emb')
      const preview = dlg.getByLabel('Mapping preview')
      const firstRow = preview.locator('tbody tr').first()
      await expect.poll(() => firstRow.locator('td').nth(1).textContent()).toBe(rows[0].text)
      // No created column yet: '—'. Map it (unix ms) and the preview shows the date.
      expect(await firstRow.locator('td').nth(2).textContent()).toBe('—')
      await dlg.getByLabel('Column for created').selectOption('whenMS')
      await dlg.getByLabel('Time unit').selectOption('unix_ms')
      await expect.poll(() => firstRow.locator('td').nth(2).textContent()).toBe(new Date(rows[0].createdMs).toISOString().slice(0, 16).replace('T', ' '))
      // A wrong unit is flagged in the cells and as a problem naming the column; Open waits.
      await dlg.getByLabel('Time unit').selectOption('unix_s')
      await dlg
        .getByRole('alert', { name: 'Mapping problems' })
        .getByText(/whenMS/)
        .waitFor()
      expect(await dlg.getByRole('button', { name: 'Open' }).isDisabled()).toBe(true)
      await dlg.getByLabel('Time unit').selectOption('unix_ms')
      await dlg.getByLabel('Column for id').selectOption('Note Key')
      await dlg.getByLabel('Column for session').selectOption('thread')
      await dlg.getByLabel('Column for role').selectOption('Spkr')
      await expect.poll(() => firstRow.locator('td').nth(0).textContent()).toBe(rows[0].key)
      await expect.poll(() => firstRow.locator('td').last().textContent()).toBe('8-d')
      await shot(page, 'mapping-dialog')
      await dlg.getByRole('button', { name: 'Open' }).click()
      const table = page.getByRole('table', { name: 'Memories' })
      await table.locator('tbody tr[data-id]').first().waitFor()
      await expect.poll(() => page.getByTestId('table-total').textContent()).toMatch(new RegExp(`\\b${rows.length} rows?`))
      // Newest first: the last row written is on top, under the id the mapping names.
      await expect.poll(() => table.locator('tbody tr[data-id]').first().getAttribute('data-id')).toBe(rows[rows.length - 1].key)
      await shot(page, 'mapping-browse')
      await page.getByRole('link', { name: 'Library' }).click()
      const facts = page.getByRole('region', { name: 'Database facts' })
      await expect.poll(() => facts.textContent()).toMatch(/mapping of table Agent Notes "v2"/)
      // Recall: picking an embedder of another length than the stored vectors says so before anything runs.
      await page.getByRole('link', { name: 'Recall', exact: true }).click()
      await page
        .locator('.selectfield', { has: page.locator('label', { hasText: /^Embedder$/ }) })
        .locator('select')
        .selectOption('hashing')
      await page.getByRole('status').filter({ hasText: 'Query embedder gives 256-d, stored vectors are 8-d (agent-notes-v2:8): dense arm off.' }).waitFor()
      await shot(page, 'mapping-recall-dim-warning')
    } finally {
      await b.close()
    }
    expect(sha256File(db)).toBe(before)
  })
})
