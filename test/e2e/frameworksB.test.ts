/**
 * Framework stores in the app (browser mode, Chromium): each opens by path — file or folder —,
 * the Library says which layout was detected, memories browse with their detail, and a recall
 * with a framework preset shows its score breakdown. Nothing under the store changes.
 */
import fs from 'node:fs'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { chromiumPath, openBrowser, rendererBuilt, serve, shot } from './harness'
import { tmpDir } from '../helpers/tmp'
import { hashTree } from '../helpers/frameworks/hashTree'
import { buildCrewaiLance, buildCrewaiLtm, pyIsoUtc } from '../helpers/frameworks/crewai'
import { buildMcpMemoryService } from '../helpers/frameworks/mcpMemoryService'
import { buildBasicMemory } from '../helpers/frameworks/basicMemory'
import { buildLettaCodeMemory, buildLettaServer, hasGit } from '../helpers/frameworks/letta'

const ready = chromiumPath() && rendererBuilt()
const NOW = Date.now()
const HOUR = 3600_000

interface Case {
  name: string
  layout: string
  /** builds the store under dir; returns the path to open */
  make(dir: string): Promise<string> | string
  rows: number
  query: string
  /** the content of the memory the query finds */
  expect: RegExp
  skip?: boolean
}

const CASES: Case[] = [
  {
    name: 'CrewAI LanceDB folder',
    layout: 'crewai-lancedb',
    make: (dir) =>
      buildCrewaiLance(path.join(dir, 'memory'), 4, [
        { id: 'c1', content: 'Staging deploys need the VPN', scope: '/crew/devops', importance: 0.8, createdAt: pyIsoUtc(NOW - HOUR), embedding: [1, 0, 0, 0] },
        { id: 'c2', content: 'Lunch is at noon', scope: '/crew/office', importance: 0.2, createdAt: pyIsoUtc(NOW - 2 * HOUR), embedding: [0, 1, 0, 0] },
      ]),
    rows: 2,
    query: 'VPN',
    expect: /Staging deploys need the VPN/,
  },
  {
    name: 'CrewAI legacy LTM',
    layout: 'crewai-ltm',
    make: (dir) =>
      buildCrewaiLtm(dir, [
        { task: 'Write the VPN deploy checklist', metadata: { agent: 'Writer', quality: 7, suggestions: [] }, datetime: String((NOW - HOUR) / 1000), score: 7 },
        { task: 'Plan the offsite lunch', metadata: { agent: 'Planner', quality: 5, suggestions: [] }, datetime: String((NOW - 2 * HOUR) / 1000), score: 5 },
      ]),
    rows: 2,
    query: 'VPN checklist',
    expect: /Write the VPN deploy checklist/,
  },
  {
    name: 'mcp-memory-service',
    layout: 'mcp-memory-service',
    make: (dir) =>
      buildMcpMemoryService(dir, 4, [
        { content: 'Staging deploys need the VPN', createdAt: (NOW - HOUR) / 1000, embedding: [1, 0, 0, 0] },
        { content: 'Lunch is at noon', createdAt: (NOW - 2 * HOUR) / 1000, embedding: [0, 1, 0, 0] },
      ]),
    rows: 2,
    query: 'VPN',
    expect: /Staging deploys need the VPN/,
  },
  {
    name: 'basic-memory folder',
    layout: 'basic-memory',
    make: (dir) =>
      buildBasicMemory(path.join(dir, '.basic-memory'), 'main', [
        {
          title: 'Deploys',
          permalink: 'deploys',
          createdAt: NOW - HOUR,
          updatedAt: NOW - HOUR,
          observations: [{ content: 'Staging deploys need the VPN', category: 'fact' }],
        },
        {
          title: 'Office',
          permalink: 'office',
          createdAt: NOW - 2 * HOUR,
          updatedAt: NOW - 2 * HOUR,
          observations: [{ content: 'Lunch is at noon', category: 'fact' }],
        },
      ]),
    rows: 2,
    query: 'VPN',
    expect: /Staging deploys need the VPN/,
  },
  {
    name: 'Letta server',
    layout: 'letta',
    make: (dir) =>
      buildLettaServer(dir, {
        agents: [{ id: 'agent-1', name: 'Sam' }],
        blocks: [{ id: 'block-1', agent: 'agent-1', label: 'human', value: 'The user works on deploys', createdAt: NOW - 3 * HOUR }],
        passages: [{ id: 'passage-1', agent: 'agent-1', text: 'Staging deploys need the VPN', createdAt: NOW - HOUR, embedding: [1, 0, 0, 0], model: 'm' }],
        messages: [{ id: 'message-1', agent: 'agent-1', role: 'user', text: 'Lunch is at noon', createdAt: NOW - 2 * HOUR, seq: 1 }],
      }),
    rows: 3,
    query: 'VPN',
    expect: /Staging deploys need the VPN/,
  },
  {
    name: 'Letta Code memory folder',
    layout: 'letta-code',
    skip: !hasGit(),
    make: (dir) =>
      buildLettaCodeMemory(path.join(dir, 'home'), 'agent-x', [
        {
          at: Math.floor((NOW - HOUR) / 1000),
          message: 'init',
          files: [
            { path: 'system/human.md', description: 'The user', body: 'Lunch is at noon' },
            { path: 'reference/deploy.md', description: 'Deploys', body: 'Staging deploys need the VPN' },
          ],
        },
      ]),
    rows: 2,
    query: 'VPN',
    expect: /Staging deploys need the VPN/,
  },
]

describe.skipIf(!ready)('framework stores in the app', () => {
  let t: ReturnType<typeof tmpDir>
  beforeAll(() => {
    t = tmpDir()
  })
  afterAll(() => t.cleanup())

  for (const c of CASES) {
    it.skipIf(!!c.skip)(`${c.name}: open, browse, recall with breakdown; unchanged`, async () => {
      const dir = path.join(t.dir, c.layout)
      fs.mkdirSync(dir, { recursive: true })
      const target = await c.make(dir)
      // The opened file, or every file of the opened folder (.git included); the workspace goes beside it.
      const hashRoot = target
      const before = hashTree(hashRoot)
      const srv = await serve(['--db', target])
      const b = await openBrowser(srv.url)
      const { page } = b
      try {
        const table = page.getByRole('table', { name: 'Memories' })
        await table.locator('tbody tr[data-id]').first().waitFor()
        await expect.poll(() => page.getByTestId('table-total').textContent()).toMatch(new RegExp(`\\b${c.rows} rows?`))
        await table.locator('tbody tr[data-id]').first().click()
        const detail = page.getByRole('complementary', { name: 'Memory detail' })
        await expect.poll(async () => ((await detail.getByTestId('memory-content').textContent()) ?? '').length).toBeGreaterThan(3)

        await page.getByRole('link', { name: 'Library' }).click()
        await page.getByRole('region', { name: 'Database facts' }).getByText('read-only').waitFor()
        const badge = page.locator('header .badge', { hasText: c.layout }).first()
        await badge.waitFor()
        expect(await badge.getAttribute('title')).toBeTruthy() // why it was detected

        await page.getByRole('link', { name: 'Recall', exact: true }).click()
        await page.getByLabel('Preset').selectOption('mcp-memory-service') // hybrid: its keyword arm runs whatever the embedder
        await page.getByLabel('Query (the raw utterance)').fill(c.query)
        const kept = page.locator('.result[data-gate="kept"]').first()
        await kept.waitFor({ timeout: 20_000 })
        await kept.click()
        const cand = page.getByRole('region', { name: 'Candidate detail' })
        await expect.poll(() => cand.textContent()).toMatch(c.expect)
        await expect.poll(() => cand.textContent()).toMatch(/value × weight = contribution/)
        await shot(page, `frameworks-${c.layout}`)
      } finally {
        await b.close()
        await srv.stop()
      }
      expect(fs.existsSync(`${target}.recallscope`)).toBe(true)
      const after = hashTree(hashRoot)
      // Files that were there are byte-identical; only SQLite's WAL side files of a reader may appear.
      for (const [f, h] of Object.entries(before)) expect(after[f], f).toBe(h)
      expect(Object.keys(after).filter((f) => !(f in before) && !/-(wal|shm)$/.test(f))).toEqual([])
    })
  }
})
