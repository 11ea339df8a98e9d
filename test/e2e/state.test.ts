/**
 * Every screen's state is a link, survives nav and reload, and the workbench adapts to the store
 * (docs/guide/links-and-state.md), as a person uses it in Chromium against browser mode:
 * - a link copied on each screen (Memories search/facet/sort, Recall's Context-window tab, the Map's
 *   request, the Trace replay mode) opens the same state in a new tab (the first in a real tab, the rest
 *   reopened in the same tab as a new tab opens them: harness.ts reopenAsNewTab); a reload keeps it;
 * - the nav items are real links (an href a new tab can open);
 * - visiting the Map four times (and again at each width, and from each copied link) starts one UMAP job
 *   (main's job list, read over the API);
 * - an MCP knowledge-graph store (no vectors) recalls on the first try, in lexical mode, saying so,
 *   with the entity named in the rows and the context block.
 */
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import type { Page } from 'playwright-core'
import { chromiumPath, copyAndOpen, copyLink, demoCopy, openBrowser, rendererBuilt, reopenAsNewTab, servedDb, shot, type Served } from './harness'
import { createMcpMemoryFixture } from '../helpers/frameworks/mcpMemory'
import { sha256File } from '../helpers/tmp'

const ready = chromiumPath() && rendererBuilt()
if (!ready) console.warn('e2e skipped: needs /usr/bin/chromium (apt-get install -y chromium) and a built renderer (npm run build)')

/** Main's job list over the API (what the top-bar indicator lists). */
async function mapJobs(srv: Served): Promise<{ jobId: string; label: string; state: string }[]> {
  const r = await fetch(`${srv.url.split('#')[0].replace(/\/$/, '')}/api/jobs.list`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${srv.token}` },
    body: '{}',
  })
  const body = (await r.json()) as { ok: boolean; data: { jobId: string; kind: string; label: string; state: string }[] }
  return body.data.filter((j) => j.kind === 'map')
}

const nav = (page: Page, name: string) => page.getByRole('navigation', { name: 'Sections' }).getByRole('link', { name, exact: true })

describe.skipIf(!ready)('every state is a link (browser mode, demo DB)', () => {
  // The 600-memory demo: nothing here depends on the size, and the map's UMAP and draws cost less than on 2,000
  // (docs/internals/testing.md, "stop 33").
  const f = servedDb((dir) => demoCopy(dir, 600))

  for (const width of [1024, 1440, 1920]) {
    it(`Memories, Recall, Map and Trace: a copied link opens the same state, nav and reload keep it (${width} px)`, async () => {
      const b = await openBrowser(f.srv.url, { width })
      const { page, context } = b
      try {
        await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: new URL(f.srv.url).origin })
        const table = page.getByRole('table', { name: 'Memories' })
        await table.locator('tbody tr[data-id]').first().waitFor()
        // nav items are links a new tab can open
        expect(await nav(page, 'Recall').getAttribute('href')).toMatch(/^#\/recall/)

        // --- Memories: search, a facet, a sort
        await page.getByLabel('Full-text search').fill('deploy')
        await expect.poll(() => page.url()).toMatch(/q=deploy/)
        const kind = (await page.getByLabel('Kind').locator('option').nth(1).getAttribute('value'))!
        await page.getByLabel('Kind').selectOption(kind)
        await table.getByRole('columnheader', { name: /Salience/ }).click()
        await expect.poll(() => page.url()).toMatch(/sort=/)
        const sortWas = await table.getByRole('columnheader', { name: /Salience/ }).getAttribute('aria-sort')
        expect(sortWas).toMatch(/ascending|descending/)
        await table.locator('tbody tr[data-id]').first().waitFor()
        // Content keeps ≥ 40 % of the table at every width
        const share = await table.evaluate(
          (t: { querySelectorAll(s: string): ArrayLike<{ getAttribute(n: string): string | null; getBoundingClientRect(): { width: number } }> }) => {
            const ths = Array.from(t.querySelectorAll('thead th'))
            const total = ths.reduce((s, th) => s + th.getBoundingClientRect().width, 0)
            const content = ths.find((th) => /Content/.test((th as unknown as { textContent: string }).textContent))!
            return content.getBoundingClientRect().width / total
          },
        )
        expect(share).toBeGreaterThanOrEqual(0.4)
        await shot(page, `state-${width}-1-memories`)
        // reload keeps it
        await page.reload()
        await expect.poll(() => page.getByLabel('Full-text search').inputValue(), { timeout: 20_000 }).toBe('deploy')
        await expect.poll(() => page.getByLabel('Kind').inputValue()).toBe(kind)
        // The copied links: the file's first one opens in a real new tab here; the others are reopened at the end of
        // the walk in this tab as a new tab opens them (reopenAsNewTab), so the walk's own nav and reloads keep the
        // state this tab built (docs/internals/testing.md, "stop 33").
        const sameMemories = async (p: Page) => {
          await expect.poll(() => p.getByLabel('Full-text search').inputValue(), { timeout: 20_000 }).toBe('deploy')
          await expect.poll(() => p.getByLabel('Kind').inputValue()).toBe(kind)
          await expect
            .poll(() =>
              p
                .getByRole('table', { name: 'Memories' })
                .getByRole('columnheader', { name: /Salience/ })
                .getAttribute('aria-sort'),
            )
            .toBe(sortWas)
        }
        let memoriesLink = ''
        if (width === 1024) {
          const { tab } = await copyAndOpen(page, context, width)
          await sameMemories(tab)
          await tab.close()
        } else memoriesLink = await copyLink(page)

        // --- Recall: a query and the Context-window tab
        await nav(page, 'Recall').click()
        await page.getByLabel('Query (the raw utterance)').fill('deploy the tier migration')
        await page.locator('.result[data-gate="kept"]').first().waitFor({ timeout: 20_000 })
        await page.getByRole('tab', { name: 'Context window' }).click()
        await expect.poll(() => page.url()).toMatch(/tab=window/)
        // away and back through the nav: still there (Memories too)
        await nav(page, 'Memories').click()
        await expect.poll(() => page.getByLabel('Full-text search').inputValue()).toBe('deploy')
        await nav(page, 'Recall').click()
        await expect.poll(() => page.getByRole('tab', { name: 'Context window' }).getAttribute('aria-selected')).toBe('true')
        const recallLink = await copyLink(page)

        // --- Map: opens on the current recall settings; four visits = one UMAP job
        // the same request on the same server is one job for the whole file (a width's visits reuse the one before).
        // The three revisits through Memories are made at the first width only: a revisit sends the same request at
        // any width (the window is not part of it), and at the other widths the first visit and the copied link's
        // tab must already reuse the job the first width started (docs/internals/testing.md, "The browser side, stop 32").
        const forQuery = async () => (await mapJobs(f.srv)).filter((j) => /for “deploy the tier migration”/.test(j.label))
        await nav(page, 'Map').click()
        await expect.poll(() => page.getByLabel('Map query').inputValue()).toBe('deploy the tier migration')
        await page.getByTestId('map-status').waitFor({ timeout: 60_000 })
        for (let visit = 0; visit < (width === 1024 ? 3 : 0); visit++) {
          await nav(page, 'Memories').click()
          await page.getByRole('table', { name: 'Memories' }).waitFor()
          await nav(page, 'Map').click()
          await page.getByTestId('map-status').waitFor({ timeout: 60_000 })
        }
        await expect.poll(async () => (await forQuery()).length, { timeout: 10_000 }).toBe(1)
        expect((await forQuery())[0].label).toMatch(/UMAP layout of [\d,]+ memories for “deploy the tier migration” \(fieldguide\)/)
        await shot(page, `state-${width}-3-map`)
        const mapLink = await copyLink(page)

        // --- Trace: an event in "Today" replay mode
        await nav(page, 'Decision trace').click()
        const log = page.getByRole('listbox', { name: 'Events' })
        await log.getByRole('option').first().click()
        const main = page.getByRole('main', { name: 'Event' })
        await main.getByRole('button', { name: 'Today' }).click()
        await expect.poll(() => page.url()).toMatch(/replay=current/)
        await page.reload()
        await expect
          .poll(() => page.getByRole('main', { name: 'Event' }).getByRole('button', { name: 'Today' }).getAttribute('aria-pressed'), { timeout: 20_000 })
          .toBe('true')
        const traceLink = await copyLink(page)

        // --- the copied links, each opened as a new tab opens it
        if (memoriesLink) {
          await reopenAsNewTab(page, memoriesLink)
          await sameMemories(page)
          // the screen a link lands on is remembered: away through the nav and back keeps its state
          await nav(page, 'Recall').click()
          await page.getByLabel('Query (the raw utterance)').waitFor()
          await nav(page, 'Memories').click()
          await sameMemories(page)
        }
        await reopenAsNewTab(page, recallLink)
        await expect.poll(() => page.getByLabel('Query (the raw utterance)').inputValue(), { timeout: 20_000 }).toBe('deploy the tier migration')
        await expect.poll(() => page.getByRole('tab', { name: 'Context window' }).getAttribute('aria-selected')).toBe('true')
        // the link runs the recall again (the screenshot shows its context window, not a screen still loading)
        await page.getByTestId('recall-counts').waitFor({ timeout: 20_000 })
        await shot(page, `state-${width}-2-recall-window-reopened`)
        await reopenAsNewTab(page, mapLink)
        await expect.poll(() => page.getByLabel('Map query').inputValue(), { timeout: 20_000 }).toBe('deploy the tier migration')
        await page.getByTestId('map-status').waitFor({ timeout: 60_000 })
        // the link asked for the same map: still one job
        expect((await forQuery()).length).toBe(1)
        await reopenAsNewTab(page, traceLink)
        await expect
          .poll(() => page.getByRole('main', { name: 'Event' }).getByRole('button', { name: 'Today' }).getAttribute('aria-pressed'), { timeout: 20_000 })
          .toBe('true')
        await shot(page, `state-${width}-4-trace-today-reopened`)
      } finally {
        await b.close()
      }
      expect(sha256File(f.db)).toBe(f.before)
    }, 240_000)
  }
})

describe.skipIf(!ready)('an MCP knowledge-graph store (no vectors)', () => {
  const f = servedDb(async (dir) => (await createMcpMemoryFixture(path.join(dir, 'memory.jsonl'))).path)

  it('recalls on the first try in lexical mode, says so, and names the entity in rows and the context block', async () => {
    const b = await openBrowser(f.srv.url, { width: 1440 })
    const { page } = b
    try {
      await page.getByRole('table', { name: 'Memories' }).locator('tbody tr[data-id]').first().waitFor()
      // the row names its entity: "Ada: Allergic to peanuts"
      await expect.poll(() => page.getByRole('table', { name: 'Memories' }).textContent()).toMatch(/Ada: Allergic to peanuts/)
      await expect.poll(() => page.getByRole('listbox', { name: 'Sessions' }).textContent()).toMatch(/Ada/)
      await shot(page, 'state-mcp-1-memories')
      await nav(page, 'Recall').click()
      await page.getByLabel('Query (the raw utterance)').fill('what is Ada allergic to')
      const kept = page.locator('.result[data-gate="kept"]')
      await kept.first().waitFor({ timeout: 20_000 })
      await expect.poll(() => page.getByTestId('lexical-note').textContent()).toMatch(/Opened in lexical mode/)
      await expect.poll(() => kept.first().textContent()).toMatch(/Ada: Allergic to peanuts/)
      await expect.poll(() => page.getByTestId('context-text').textContent()).toMatch(/Ada: Allergic to peanuts/)
      // the header's pool counts the listed candidates
      const listed = await page.locator('.result').count()
      await expect.poll(() => page.getByTestId('recall-counts').textContent()).toMatch(new RegExp(`\\b${listed} in pool`))
      await shot(page, 'state-mcp-2-recall')
    } finally {
      await b.close()
    }
    expect(sha256File(f.db)).toBe(f.before)
  }, 120_000)
})
