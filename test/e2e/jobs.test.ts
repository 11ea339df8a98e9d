/**
 * Background jobs as a person sees them: import a JSONL file from the Library
 * (progress bar, report, open the result), and backfill vectors for an Ollama
 * model picked in the embedder status popover — against a loopback server that
 * speaks Ollama's protocol — with the progress bar reaching done.
 */
import fs from 'node:fs'
import path from 'node:path'
import Database from 'better-sqlite3'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { chromiumPath, openBrowser, rendererBuilt, serve, shot, type Served } from './harness'
import { writeDemoDb } from '../helpers/demoDb'
import { startFakeOllama, type FakeServer, type FakeOllamaSwitches } from '../helpers/fakeOllama'
import { sha256File, tmpDir } from '../helpers/tmp'

const ready = chromiumPath() && rendererBuilt()
if (!ready) console.warn('e2e skipped: needs /usr/bin/chromium (apt-get install -y chromium) and a built renderer (npm run build)')

describe.skipIf(!ready)('jobs: import and embedding backfill with progress', () => {
  let t: ReturnType<typeof tmpDir>
  let db: string
  let srv: Served
  let ollama: FakeServer<FakeOllamaSwitches>
  let before: string
  beforeAll(async () => {
    t = tmpDir()
    db = path.join(t.dir, 'small.db')
    writeDemoDb(db, { memories: 300, events: false })
    before = sha256File(db)
    ollama = await startFakeOllama({ models: [{ name: 'nomic-embed-text:latest', dim: 64, embeddingLength: true }] })
    srv = await serve(['--db', db], { OLLAMA_HOST: ollama.url })
  })
  afterAll(async () => {
    await srv?.stop()
    await ollama?.close()
    t?.cleanup()
  })

  it('imports a JSONL file from the Library and opens the result', async () => {
    const jsonl = path.join(t.dir, 'notes.jsonl')
    const lines = [
      JSON.stringify({ id: 'n1', content: 'The user prefers window seats.', kind: 'semantic', createdAt: '2026-10-01T10:00:00Z', userId: 'u1' }),
      'this line is not JSON',
      JSON.stringify({ id: 'n2', content: 'Deploys happen on Tuesdays.', kind: 'procedural', created_at: 1790000000000, user_id: 'u1' }),
      JSON.stringify({ id: 'n3', kind: 'semantic' }),
    ]
    fs.writeFileSync(jsonl, lines.join('\n'))
    const out = path.join(t.dir, 'notes.db')
    const b = await openBrowser(srv.url)
    const { page } = b
    try {
      await page.getByRole('link', { name: 'Library' }).click()
      await page.getByLabel('Import format').selectOption('jsonl')
      await page.getByLabel('Import from').fill(jsonl)
      await page.getByLabel('Import to').fill(out)
      await page.getByRole('button', { name: 'Import', exact: true }).click()
      const report = page.locator('.import-report')
      await report.waitFor({ timeout: 30_000 })
      // 2 good lines written; the bad JSON line and the line without content skipped.
      expect(await report.textContent()).toMatch(/Wrote 2 memories/)
      expect(await report.textContent()).toMatch(/2 skipped/)
      await shot(page, 'jobs-1-import')
      await report.getByRole('button', { name: 'Open it' }).click()
      await expect.poll(() => page.locator('.dbname').textContent()).toBe(out)
      const table = page.getByRole('table', { name: 'Memories' })
      await expect.poll(() => page.getByTestId('table-total').textContent()).toMatch(/^2 rows/)
      expect(await table.locator('tbody tr[data-id]').count()).toBe(2)
    } finally {
      await b.close()
    }
    const check = new Database(out, { readonly: true })
    expect(check.prepare('SELECT id FROM memories ORDER BY id').pluck().all()).toEqual(['n1', 'n2'])
    check.close()
  })

  it('backfills vectors for an Ollama model with a progress bar; the agent DB stays untouched', async () => {
    const b = await openBrowser(srv.url)
    const { page } = b
    try {
      await page.getByRole('link', { name: 'Library' }).click()
      await page.getByLabel('Database path').fill(db)
      await page.getByRole('button', { name: 'Open', exact: true }).click()
      await page.getByRole('table', { name: 'Memories' }).locator('tbody tr[data-id]').first().waitFor()
      await page.getByRole('button', { name: 'Embedder status' }).click()
      const panel = page.getByRole('dialog', { name: 'Embedder settings' })
      // The model list comes from the server's /api/tags.
      await expect.poll(() => panel.getByLabel('Embedder').locator('option').allTextContents()).toContain('ollama:nomic-embed-text:latest · 64 dims')
      await panel.getByLabel('Embedder').selectOption('ollama:nomic-embed-text:latest')
      await panel.getByRole('button', { name: 'Save' }).click()
      await expect.poll(() => page.getByRole('button', { name: 'Embedder status' }).textContent()).toMatch(/ollama:nomic-embed-text:latest · ok/)
      await panel.getByRole('button', { name: /Backfill missing vectors/ }).click()
      const bar = panel.getByRole('progressbar')
      await expect.poll(() => bar.getAttribute('aria-valuenow'), { timeout: 30_000 }).toBe('100')
      await expect.poll(() => panel.locator('.job').getAttribute('class')).toMatch(/done/)
      // The status asks again: the model's vectors are now there (300 backfilled), no "finds nothing" warning.
      await expect.poll(() => panel.textContent()).toMatch(/stored vectors300/)
      await shot(page, 'jobs-2-backfill')
    } finally {
      await b.close()
    }
    // The fake server saw batch /api/embed calls for every memory; the vectors went to the workspace.
    const embedded = ollama.requests.filter((r) => r.path === '/api/embed').reduce((n, r) => n + ((r.body as { input: string[] }).input?.length ?? 0), 0)
    expect(embedded).toBe(300)
    const ws = new Database(`${db}.recallscope`, { readonly: true })
    expect(ws.prepare(`SELECT count(*) FROM ws_embeddings WHERE model = 'nomic-embed-text:latest'`).pluck().get()).toBe(300)
    ws.close()
    expect(sha256File(db)).toBe(before)
  })
})
