/**
 * "Map a table…" for Postgres in the browser: the Library's Connect form reaches a
 * PGlite (+ pgvector) server whose schema holds one odd table and no known layout;
 * Connect answers UNKNOWN_LAYOUT and offers the mapping dialog over the same
 * connection (tables from information_schema, suggestions, live preview), Open
 * browses the rows in Memories. The server's table is unchanged and the password
 * (from PGPASSWORD, browser mode) never reaches the page.
 */
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { chromiumPath, openBrowser, rendererBuilt, serve, shot, type Served } from './harness'
import { buildMappedFixture, type FixtureRow } from '../helpers/mappedFixture'
import { pgText, pgVector, startPgServer, type PgTestServer } from '../helpers/pgServer'
import { tmpDir } from '../helpers/tmp'

const ready = chromiumPath() && rendererBuilt()
if (!ready) console.warn('e2e skipped: needs /usr/bin/chromium and a built renderer (npm run build)')

/** What the server holds, read by the test itself (an md5 over the ordered rows). */
const CHECKSUM = `SELECT md5(string_agg(x::text, '|' ORDER BY "Note Key")) AS h FROM odd."Agent Notes" x`

describe.skipIf(!ready)('mapping a Postgres table from the Library (browser mode)', () => {
  let pg: PgTestServer
  let srv: Served
  let t: ReturnType<typeof tmpDir>
  let rows: FixtureRow[]
  let before: string
  beforeAll(async () => {
    t = tmpDir()
    rows = buildMappedFixture(path.join(t.dir, 'rows.sqlite')) // values only
    pg = await startPgServer()
    await pg.seed(`CREATE SCHEMA odd;
      CREATE TABLE odd."Agent Notes" ("Note Key" text PRIMARY KEY, "Body" text, "whenMS" bigint, thread text, "Spkr" text, "Emb" vector(8));
      INSERT INTO odd."Agent Notes" VALUES ${rows
        .map((r) => `(${pgText(r.key)}, ${pgText(r.text)}, ${r.createdMs}, ${pgText(r.thread)}, ${pgText(r.speaker)}, ${pgVector(r.vec)})`)
        .join(', ')};`)
    before = (await pg.query<{ h: string }>(CHECKSUM))[0].h
    srv = await serve([], { PGPASSWORD: 'secret-pw' })
  }, 180_000)
  afterAll(async () => {
    await srv?.stop()
    await pg?.stop()
    t?.cleanup()
  })

  it('Connect → UNKNOWN_LAYOUT → Map a table… → preview → Open → rows in Memories', async () => {
    const b = await openBrowser(srv.url)
    const { page } = b
    try {
      await page.getByRole('link', { name: 'Library' }).click()
      const form = page.getByRole('region', { name: 'Connect to Postgres' })
      await form.getByLabel('Host').fill('127.0.0.1')
      await form.getByLabel('Port').fill(new URL(pg.url).port)
      await form.getByLabel('Database').fill('postgres')
      await form.getByLabel('User').fill('recallscope_test')
      await form.getByLabel('sslmode').selectOption('disable')
      await form.getByLabel('Schema').fill('odd')
      await form.getByRole('checkbox', { name: 'save as' }).check()
      await form.getByLabel('Connection name').fill('odd notes')
      await form.getByRole('button', { name: 'Connect', exact: true }).click()
      const alert = form.getByRole('alert')
      await alert.waitFor({ timeout: 30_000 })
      expect(await alert.getAttribute('data-code')).toBe('UNKNOWN_LAYOUT')
      await shot(page, 'pg-mapping-unknown-layout')
      await alert.getByRole('button', { name: 'Map a table…' }).click()

      const dlg = page.getByRole('dialog', { name: 'Open a table by mapping' })
      await dlg.waitFor()
      // Pre-filled from the suggestion: the only table, Body as content, Emb (vector(8)) as a pgvector vector.
      await expect.poll(() => dlg.getByLabel('Table').inputValue(), { timeout: 30_000 }).toBe('Agent Notes')
      await expect.poll(() => dlg.getByLabel('Column for content').inputValue()).toBe('Body')
      await expect.poll(() => dlg.getByLabel('Column for vector').inputValue()).toBe('Emb')
      expect(await dlg.getByLabel('Vector encoding').inputValue()).toBe('pgvector')
      const preview = dlg.getByLabel('Mapping preview')
      const firstRow = preview.locator('tbody tr').first()
      await expect.poll(() => firstRow.locator('td').nth(1).textContent(), { timeout: 30_000 }).toBe(rows[0].text)
      expect(await preview.locator('tbody tr').count()).toBe(20)
      // Created as unix ms: the preview shows the date; read as seconds, the problem names the column and Open waits.
      await dlg.getByLabel('Column for created').selectOption('whenMS')
      await dlg.getByLabel('Time unit').selectOption('unix_s')
      await dlg
        .getByRole('alert', { name: 'Mapping problems' })
        .getByText(/whenMS/)
        .waitFor({ timeout: 30_000 })
      expect(await dlg.getByRole('button', { name: 'Open' }).isDisabled()).toBe(true)
      await dlg.getByLabel('Time unit').selectOption('unix_ms')
      await expect
        .poll(() => firstRow.locator('td').nth(2).textContent(), { timeout: 30_000 })
        .toBe(new Date(rows[0].createdMs).toISOString().slice(0, 16).replace('T', ' '))
      await dlg.getByLabel('Column for id').selectOption('Note Key')
      await dlg.getByLabel('Column for role').selectOption('Spkr')
      await expect.poll(() => firstRow.locator('td').nth(0).textContent(), { timeout: 30_000 }).toBe(rows[0].key)
      await expect.poll(() => firstRow.locator('td').last().textContent()).toBe('8-d')
      await shot(page, 'pg-mapping-dialog')
      await dlg.getByRole('button', { name: 'Open' }).click()

      const table = page.getByRole('table', { name: 'Memories' })
      await table.locator('tbody tr[data-id]').first().waitFor({ timeout: 30_000 })
      await expect.poll(() => page.getByTestId('table-total').textContent()).toMatch(new RegExp(`\\b${rows.length} rows?`))
      await expect.poll(() => table.locator('tbody tr[data-id]').first().getAttribute('data-id')).toBe(rows[rows.length - 1].key)
      await shot(page, 'pg-mapping-memories')
      // The Library: the mapping is what the store was opened by, and the connection was saved (no password).
      await page.getByRole('link', { name: 'Library' }).click()
      const facts = page.getByRole('region', { name: 'Database facts' })
      await expect.poll(() => facts.textContent(), { timeout: 30_000 }).toMatch(/mapping of odd\.Agent Notes/)
      const savedRow = page.getByRole('table', { name: 'Saved connections' }).getByRole('row').first()
      expect(await savedRow.textContent()).toContain('odd notes')
      await shot(page, 'pg-mapping-library')
      expect(await page.content()).not.toContain('secret-pw')
      // Reopening the saved connection needs no mapping: the one saved in the workspace is reused.
      await savedRow.getByRole('button', { name: 'Connect' }).click()
      await table.locator('tbody tr[data-id]').first().waitFor({ timeout: 30_000 })
      await expect.poll(() => page.getByTestId('table-total').textContent()).toMatch(new RegExp(`\\b${rows.length} rows?`))
      expect(await page.getByText('mapped', { exact: true }).count()).toBeGreaterThan(0)
    } finally {
      await b.close()
    }
    expect((await pg.query<{ h: string }>(CHECKSUM))[0].h).toBe(before)
  })
})
