/**
 * A LanceDB table recallscope has no reader for, opened in the browser through the mapping dialog:
 * typing the folder into the Library opens the dialog on its table (columns read through LanceDB),
 * the preview shows its rows, Open browses them and a dense recall with the mapped vectors runs;
 * nothing in the folder changes. The table is written by the real @lancedb/lancedb client.
 */
import path from 'node:path'
import * as lancedb from '@lancedb/lancedb'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { chromiumPath, openBrowser, rendererBuilt, serve, shot, type Served } from './harness'
import { hashTree } from '../helpers/frameworks/hashTree'
import { tmpDir } from '../helpers/tmp'

const ready = chromiumPath() && rendererBuilt()
if (!ready) console.warn('e2e skipped: needs /usr/bin/chromium (apt-get install -y chromium) and a built renderer (npm run build)')

const ROWS = [
  { note_id: 'trip-1', note_body: 'The ferry to the island leaves at 7', owner: 'ana', embedding: [0.1, 0.2, 0.95, 0] },
  { note_id: 'trip-2', note_body: 'Pick up the rental car keys at the desk', owner: 'ana', embedding: [0.9, 0.1, 0.1, 0.3] },
  { note_id: 'trip-3', note_body: 'Dinner booked for Friday at the harbour', owner: 'ben', embedding: [0.3, 0.3, 0.6, 0.6] },
]

describe.skipIf(!ready)('LanceDB table by mapping (browser)', () => {
  let t: ReturnType<typeof tmpDir>
  let srv: Served
  let dir: string
  let before: Record<string, string>
  beforeAll(async () => {
    t = tmpDir()
    dir = path.join(t.dir, 'notes.lancedb')
    const db = await lancedb.connect(dir)
    await db.createTable('trip_notes', ROWS)
    before = hashTree(dir)
    srv = await serve([])
  })
  afterAll(async () => {
    await srv?.stop()
    t?.cleanup()
  })

  it('the folder opens the dialog on its table; Open browses the rows; the folder is unchanged', async () => {
    const b = await openBrowser(srv.url)
    const { page } = b
    const nav = (name: string) => page.getByRole('navigation').getByText(name, { exact: true }).click()
    try {
      await nav('Library')
      await page.getByLabel('Database path').fill(dir)
      await page.getByLabel('Database path').press('Enter')
      const dlg = page.getByRole('dialog', { name: 'Open a table by mapping' })
      await dlg.waitFor()
      // the first read of the folder goes through LanceDB in a child process (seconds on a loaded machine)
      await expect.poll(() => dlg.getByLabel('Table').inputValue(), { timeout: 60_000 }).toBe('trip_notes')
      await expect.poll(() => dlg.getByLabel('Column for content').inputValue(), { timeout: 30_000 }).toBe('note_body')
      await expect.poll(() => dlg.getByLabel('Column for vector').inputValue()).toBe('embedding')
      await dlg.getByLabel('Column for id').selectOption('note_id')
      await dlg.getByLabel('Column for user').selectOption('owner')
      const firstRow = dlg.getByLabel('Mapping preview').locator('tbody tr').first()
      await expect.poll(() => firstRow.locator('td').nth(0).textContent(), { timeout: 30_000 }).toBe(ROWS[0].note_id)
      await expect.poll(() => firstRow.locator('td').nth(1).textContent()).toBe(ROWS[0].note_body)
      await expect.poll(() => firstRow.locator('td').last().textContent()).toBe('4-d')
      await shot(page, 'lance-mapping-dialog')
      await dlg.getByRole('button', { name: 'Open' }).click()
      const table = page.getByRole('table', { name: 'Memories' })
      await table.locator('tbody tr[data-id]').first().waitFor()
      await expect.poll(() => page.getByTestId('table-total').textContent()).toMatch(/\b3 rows\b/)
      await expect
        .poll(async () => (await table.locator('tbody tr[data-id]').evaluateAll((rs) => rs.map((r) => r.getAttribute('data-id')))).sort())
        .toEqual(ROWS.map((r) => r.note_id).sort())
      await shot(page, 'lance-mapping-browse')
      await nav('Library')
      await expect.poll(() => page.getByRole('region', { name: 'Database facts' }).textContent()).toMatch(/mapping of table trip_notes/)
    } finally {
      await b.close()
    }
    expect(hashTree(dir)).toEqual(before)
  })
})
