/**
 * Framework stores opened directly in browser mode (issue 14): each fixture is written the way
 * its framework writes it (test/helpers/frameworks/), served with `--db`, browsed, recalled with
 * the framework's own preset where it has one, and hashed before and after.
 */
import fs from 'node:fs'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import type { Page } from 'playwright-core'
import { chromiumPath, openBrowser, rendererBuilt, servedDb, shot } from './harness'
import { sha256File } from '../helpers/tmp'
import { createAgentsSession, ITEMS } from '../helpers/frameworks/openaiAgents'
import { createMcpMemoryFixture } from '../helpers/frameworks/mcpMemory'
import { createMem0TsFixture } from '../helpers/frameworks/mem0'
import { createLangGraphPyCheckpoints, THREADS } from '../helpers/frameworks/langgraph'

const ready = chromiumPath() && rendererBuilt()
if (!ready) console.warn('e2e skipped: needs /usr/bin/chromium (apt-get install -y chromium) and a built renderer (npm run build)')

async function browseAndLibrary(page: Page, total: number, detected: RegExp): Promise<void> {
  const table = page.getByRole('table', { name: 'Memories' })
  await table.locator('tbody tr[data-id]').first().waitFor()
  await expect.poll(() => page.getByTestId('table-total').textContent()).toMatch(new RegExp(`\\b${total} rows?`))
  await page.getByRole('link', { name: 'Library' }).click()
  const facts = page.getByRole('region', { name: 'Database facts' })
  await facts.getByText('read-only').waitFor()
  await expect.poll(() => facts.textContent()).toMatch(detected)
}

describe.skipIf(!ready)('framework stores in the browser', () => {
  describe('OpenAI Agents SDK session', () => {
    const f = servedDb((dir) => {
      const p = path.join(dir, 'agents.db')
      createAgentsSession(p)
      return p
    })

    it('browses the items and recalls the last items of a session with the SDK preset, with the breakdown', async () => {
      const b = await openBrowser(f.srv.url)
      const { page } = b
      try {
        await browseAndLibrary(page, ITEMS.length, /OpenAI Agents SDK SQLiteSession: agent_sessions/)
        await shot(page, 'frameworks-agents-library')
        await page.getByRole('link', { name: 'Recall', exact: true }).click()
        await page.getByLabel('Preset').selectOption('openai-agents')
        await page.getByLabel('Scope session').selectOption('conv-1')
        await page.getByLabel('Query (the raw utterance)').fill('weather')
        // get_items(): every valid item of conv-1, newest first here
        const expected = ITEMS.map((it, i) => ({ it, id: String(i + 1) }))
          .filter((x) => x.it.session === 'conv-1' && typeof x.it.item !== 'string')
          .reverse()
          .map((x) => x.id)
        await expect
          .poll(() => page.locator('.result[data-gate="kept"]').evaluateAll((els) => els.map((e) => e.getAttribute('data-id'))), { timeout: 20_000 })
          .toEqual(expected)
        await page.locator('.result[data-gate="kept"]').first().click()
        await expect.poll(() => page.getByRole('region', { name: 'Candidate detail' }).textContent()).toMatch(/recency/i)
        await shot(page, 'frameworks-agents-recall')
      } finally {
        await b.close()
      }
      expect(sha256File(f.db)).toBe(f.before)
    })
  })

  describe('mem0 (TypeScript OSS, opened from the vector store, history found beside it)', () => {
    const f = servedDb(async (dir) => (await createMem0TsFixture(path.join(dir, 'mem0'))).vectorPath)

    it('browses memories with their history and says what it found', async () => {
      const b = await openBrowser(f.srv.url)
      const { page } = b
      try {
        await browseAndLibrary(page, 6, /mem0 \(vector store\): vectors\(id, vector, payload\).*memory_history.*sibling memory\.db/)
        await page.getByRole('link', { name: 'Memories' }).first().click()
        const row = page.getByRole('table', { name: 'Memories' }).locator('tbody tr[data-id]', { hasText: 'no sugar' })
        await row.click()
        const detail = page.getByRole('complementary', { name: 'Memory detail' })
        await expect.poll(() => detail.textContent()).toContain('UPDATE')
        await shot(page, 'frameworks-mem0-detail')
      } finally {
        await b.close()
      }
      expect(sha256File(f.db)).toBe(f.before)
      const others = fs.readdirSync(path.dirname(f.db)).filter((n) => n.endsWith('.db') && !n.includes('.recallscope'))
      expect(others.sort()).toEqual(['memory.db', 'vector_store.db', 'vector_store_entities.db'])
    })
  })

  describe('MCP knowledge-graph memory.jsonl', () => {
    const f = servedDb(async (dir) => (await createMcpMemoryFixture(path.join(dir, 'memory.jsonl'))).path)

    it('shows observations with their entity and its relations in the memory detail', async () => {
      const b = await openBrowser(f.srv.url)
      const { page } = b
      try {
        await browseAndLibrary(page, 5, /MCP knowledge-graph memory \(memory\.jsonl\)/)
        await page.getByRole('link', { name: 'Memories' }).first().click()
        const row = page.getByRole('table', { name: 'Memories' }).locator('tbody tr[data-id]', { hasText: 'Allergic to peanuts' })
        await row.click()
        const detail = page.getByRole('complementary', { name: 'Memory detail' })
        await expect.poll(() => detail.textContent()).toContain('lives in')
        await shot(page, 'frameworks-mcp-detail')
      } finally {
        await b.close()
      }
      expect(sha256File(f.db)).toBe(f.before)
    })
  })

  describe('LangGraph checkpointer (Python msgpack)', () => {
    const f = servedDb((dir) => {
      const p = path.join(dir, 'checkpoints.sqlite')
      createLangGraphPyCheckpoints(p)
      return p
    })

    it('lists threads as sessions and their messages as turns', async () => {
      const b = await openBrowser(f.srv.url)
      const { page } = b
      try {
        const turns = THREADS.reduce((n, th) => n + th.steps.flat().length, 0)
        await browseAndLibrary(page, turns, /LangGraph SQLite checkpointer: .*msgpack serde/)
        await page.getByRole('link', { name: 'Memories' }).first().click()
        const sessions = page.getByRole('listbox', { name: 'Sessions' })
        // one session per thread, newest first, each with its turn count
        const counts = [...THREADS].sort((x, y) => Date.parse(y.ts[0]) - Date.parse(x.ts[0])).map((th) => `${th.steps.flat().length} memories`)
        await expect.poll(async () => (await sessions.getByRole('option').allTextContents()).map((t) => /\d+ memories/.exec(t)?.[0])).toEqual(counts)
        // a thread's turns, in order
        await sessions.getByRole('option').last().click()
        await expect.poll(() => page.getByTestId('table-total').textContent()).toMatch(new RegExp(`\\b${THREADS[0].steps.flat().length} rows?`))
        await shot(page, 'frameworks-langgraph')
      } finally {
        await b.close()
      }
      expect(sha256File(f.db)).toBe(f.before)
    })
  })
})
