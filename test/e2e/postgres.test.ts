/**
 * A Postgres store from the Library, in Chromium against browser mode: the
 * server (PGlite + pgvector over the wire, test/helpers/pgServer.ts) holds the
 * canonical tables; the page fills the Library's Connect form (no password:
 * browser mode takes it from the environment, PGPASSWORD here), tests a wrong
 * schema (a typed error) then the right one, connects and saves the connection,
 * browses the memories, runs a recall whose dense arm runs in the database,
 * grades a case from it and runs an eval.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { chromiumPath, openBrowser, rendererBuilt, serve, shot, type Served } from './harness'
import { canonicalDdl, canonicalInserts, makeMemories } from '../helpers/pgFixture'
import { startPgServer, type PgTestServer } from '../helpers/pgServer'

const ready = chromiumPath() && rendererBuilt()
if (!ready) console.warn('e2e skipped: needs /usr/bin/chromium and a built renderer (npm run build)')

describe.skipIf(!ready)('Postgres from the Library (browser mode)', () => {
  let pg: PgTestServer
  let srv: Served
  const mems = makeMemories(200)
  beforeAll(async () => {
    pg = await startPgServer()
    await pg.seed(`${canonicalDdl('canon')} ${canonicalInserts('canon', mems)}`)
    srv = await serve([], { PGPASSWORD: 'secret-pw' })
  }, 180_000)
  afterAll(async () => {
    await srv?.stop()
    await pg?.stop()
  })

  it('connect → browse → recall with breakdown → eval; the password never reaches the page', async () => {
    const url = `${pg.url.replace(':secret-pw@', '@')}&schema=canon`
    const b = await openBrowser(srv.url)
    const { page } = b
    try {
      await page.getByRole('link', { name: 'Library' }).click()
      const form = page.getByRole('region', { name: 'Connect to Postgres' })
      // Browser mode: no password field, and the form says where the password comes from.
      expect(await form.getByLabel('Password').count()).toBe(0)
      await form.getByText('PGPASSWORD').first().waitFor()
      await form.getByLabel('Host').fill('127.0.0.1')
      await form.getByLabel('Port').fill(new URL(pg.url).port)
      await form.getByLabel('Database').fill('postgres')
      await form.getByLabel('User').fill('recallscope_test')
      await form.getByLabel('sslmode').selectOption('disable')
      // A schema without a memory store: Test shows the typed error, nothing opens.
      await form.getByLabel('Schema').fill('nosuch')
      await form.getByRole('button', { name: 'Test' }).click()
      const alert = form.getByRole('alert')
      await alert.waitFor({ timeout: 30_000 })
      expect(await alert.getAttribute('data-code')).toBe('UNKNOWN_LAYOUT')
      expect(await alert.textContent()).toContain('No memory store recallscope knows')
      await shot(page, 'postgres-connect-error')
      // The right schema: Test connects, names the layout and says the dense arm runs in the database.
      await form.getByLabel('Schema').fill('canon')
      await form.getByRole('button', { name: 'Test' }).click()
      const status = form.getByRole('status', { name: 'Connection test' })
      await status.waitFor({ timeout: 30_000 })
      expect(await status.textContent()).toContain(`canonical store, ${mems.length} memories`)
      expect(await status.textContent()).toContain('Dense recall runs in the database')
      await form.getByRole('checkbox', { name: 'save as' }).check()
      await form.getByLabel('Connection name').fill('pglite')
      await shot(page, 'postgres-connect-form')
      await form.getByRole('button', { name: 'Connect', exact: true }).click()
      // Opening switches to the workbench; the header names the store (password-free URL), the layout and read-only.
      await page.getByText(url, { exact: true }).first().waitFor({ timeout: 30_000 })
      await page.getByText('canonical', { exact: true }).first().waitFor()
      await page.getByRole('link', { name: 'Library' }).click()
      await page.getByRole('region', { name: 'Database facts' }).getByText('read-only').waitFor({ timeout: 30_000 })
      // Saved: listed with the password-free URL, the password from PGPASSWORD.
      const savedRow = page.getByRole('table', { name: 'Saved connections' }).getByRole('row').first()
      expect(await savedRow.textContent()).toContain(url)
      expect(await savedRow.textContent()).toContain('PGPASSWORD')
      await shot(page, 'postgres-library')
      expect(await page.content()).not.toContain('secret-pw')

      await page.getByRole('link', { name: 'Memories' }).click()
      const table = page.getByRole('table', { name: 'Memories' })
      await table.locator('tbody tr[data-id]').first().waitFor({ timeout: 30_000 })
      const ids = await table.locator('tbody tr[data-id]').evaluateAll((els) => els.map((e) => e.getAttribute('data-id')!))
      // newest first: the fixture's last memories
      expect(ids[0]).toBe(mems[mems.length - 1].id)
      await shot(page, 'postgres-browse')

      await page.getByRole('link', { name: 'Recall', exact: true }).click()
      await page.getByLabel('Query (the raw utterance)').fill('coffee in paris')
      await page.locator('.result[data-gate="kept"]').first().waitFor({ timeout: 30_000 })
      const kept = await page.locator('.result[data-gate="kept"]').evaluateAll((els) => els.map((e) => e.getAttribute('data-id')!))
      expect(kept.length).toBeGreaterThan(0)
      for (const id of kept) expect(mems.some((m) => m.id === id)).toBe(true)
      // the breakdown: rows past top-k shown dropped with their gate, as for a SQLite store
      expect(await page.locator('.result[data-gate="topK"]').count()).toBeGreaterThan(0)
      await shot(page, 'postgres-recall')
      expect(await page.content()).not.toContain('secret-pw')

      // Evaluate: a case graded from a recall on the Postgres store, then an eval run (cases live in the local workspace).
      await page.getByRole('link', { name: 'Evaluate' }).click()
      await page.getByRole('button', { name: 'New case' }).click()
      const editor = page.getByRole('complementary', { name: 'Case editor' })
      await editor.getByLabel('Case query').fill('coffee in paris')
      await editor.getByRole('button', { name: 'Find candidates' }).click()
      const list = editor.getByRole('list', { name: 'Grade the recalled memories' })
      await list.locator('li').first().waitFor({ timeout: 30_000 })
      await list.locator('li').nth(0).getByRole('button', { name: '3' }).click()
      await editor.getByRole('button', { name: 'Save case' }).click()
      await expect.poll(() => page.getByTestId('case-facets').textContent()).toMatch(/^1 case/)
      await page.getByLabel('Run name').fill('postgres')
      await page.getByRole('button', { name: 'Run eval' }).click()
      await page.getByTestId('run-metrics').getByText('ndcg@10').waitFor({ timeout: 60_000 })
      await page.getByRole('table', { name: 'Per-case results' }).locator('tbody tr[data-id]').first().waitFor()
      await shot(page, 'postgres-eval')
    } finally {
      await b.close()
    }
  })
})
