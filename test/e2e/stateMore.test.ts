/**
 * The rest of "the workbench keeps its state, shares it, and adapts to the store it opened"
 * (docs/guide/links-and-state.md, docs/guide/evaluation.md), in Chromium against browser mode, beside
 * state.test.ts (Memories / Recall / Map / Trace links, map job dedupe, the MCP graph store):
 * - Recall's pinned baseline and the Map's lasso selection travel in a copied link and survive a reload
 *   (the baseline's link in a real new tab; the others reopened in the same tab as a new tab opens them:
 *   harness.ts reopenAsNewTab);
 * - the Tune screen checks the start scope before searching: from `portal-episodic` it names
 *   unit=session and "Widen to unit=memory" fixes the config under test (1024, 1440, 1920 px); the
 *   chosen preset and the widened overrides travel in a copied link and survive a reload;
 * - rows of a mapped table without a created column show "no time", never 1970-01-01.
 */
import fs from 'node:fs'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Page } from 'playwright-core'
import {
  chromiumPath,
  copyAndOpen,
  copyLink,
  demoCopy,
  openBrowser,
  rendererBuilt,
  reopenAsNewTab,
  serve,
  servedDb,
  shot,
  waitForDrawnLayout,
  type Served,
} from './harness'
import { buildMappedFixture } from '../helpers/mappedFixture'
import { sha256File, tmpDir } from '../helpers/tmp'

const ready = chromiumPath() && rendererBuilt()
if (!ready) console.warn('e2e skipped: needs /usr/bin/chromium (apt-get install -y chromium) and a built renderer (npm run build)')

const nav = (page: Page, name: string) => page.getByRole('navigation', { name: 'Sections' }).getByRole('link', { name, exact: true })

describe.skipIf(!ready)('pinned baseline, lasso and the tune scope check (browser mode, demo DB)', () => {
  // The 600-memory demo: nothing here depends on the size, and the map's UMAP costs less than on 2,000
  // (docs/internals/testing.md, "stop 33").
  const f = servedDb((dir) => demoCopy(dir, 600))

  it('a pinned baseline and a lasso selection open the same in a copied link and after a reload', async () => {
    const width = 1440
    const b = await openBrowser(f.srv.url, { width })
    const { page, context } = b
    try {
      await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: new URL(f.srv.url).origin })
      await page.getByRole('table', { name: 'Memories' }).locator('tbody tr[data-id]').first().waitFor()
      await nav(page, 'Recall').click()
      await page.getByLabel('Query (the raw utterance)').fill('deploy the tier migration')
      await page.locator('.result[data-gate="kept"]').first().waitFor({ timeout: 20_000 })
      await page.getByRole('button', { name: 'Pin baseline' }).click()
      await page.getByTestId('baseline-status').waitFor()
      await expect.poll(() => page.url()).toMatch(/pin=/)
      {
        const { tab } = await copyAndOpen(page, context, width)
        await expect.poll(() => tab.getByTestId('baseline-status').textContent(), { timeout: 20_000 }).toMatch(/pinned baseline/)
        await tab.getByRole('button', { name: /^Unpin / }).waitFor()
        await tab.locator('.result[data-gate="kept"]').first().waitFor({ timeout: 20_000 })
        await shot(tab, 'state25-1-pinned-baseline-new-tab')
        await tab.close()
      }
      await page.reload()
      await expect.poll(() => page.getByTestId('baseline-status').textContent(), { timeout: 20_000 }).toMatch(/pinned baseline/)

      // --- Map: lasso the left half; the link and a reload select the same memories
      await nav(page, 'Map').click()
      await expect.poll(() => page.getByLabel('Map query').inputValue()).toBe('deploy the tier migration')
      const status = page.getByTestId('map-status')
      await expect.poll(() => status.textContent(), { timeout: 60_000 }).toMatch(/Showing [\d,]+ of/)
      // Lasso the final (UMAP) layout, drawn at its size: UMAP replacing the PCA frame, or the canvas's first resize,
      // in the middle of the drag loses the lasso (it failed so on a loaded run).
      await expect.poll(() => status.textContent(), { timeout: 120_000 }).toMatch(/UMAP \(\d+ neighbours/)
      await waitForDrawnLayout(page)
      const canvas = page.getByTestId('map-overlay')
      const box = (await canvas.boundingBox())!
      await page.mouse.move(box.x + 2, box.y + 2)
      await page.keyboard.down('Shift')
      await page.mouse.down()
      for (const [x, y] of [
        [box.width / 2, 2],
        [box.width / 2, box.height - 2],
        [2, box.height - 2],
      ])
        await page.mouse.move(box.x + x, box.y + y, { steps: 4 })
      await page.mouse.up()
      await page.keyboard.up('Shift')
      const region = page.getByRole('region', { name: 'Selected region' })
      const heading = (await region.locator('h4').textContent())!
      expect(heading).toMatch(/^[\d,]+ in the region$/)
      await expect.poll(() => page.url()).toMatch(/lasso=/)
      const ids = decodeURIComponent(new URL(page.url()).hash)
        .match(/lasso=([^&]*)/)![1]
        .split(',')
      expect(ids.length).toBe(Number(heading.replace(/[^\d]/g, '')))
      await shot(page, 'state25-2-map-lasso')
      const lassoLink = await copyLink(page)
      await page.reload()
      await expect.poll(() => page.getByRole('region', { name: 'Selected region' }).locator('h4').textContent(), { timeout: 60_000 }).toBe(heading)
      await reopenAsNewTab(page, lassoLink)
      await expect.poll(() => page.getByRole('region', { name: 'Selected region' }).locator('h4').textContent(), { timeout: 60_000 }).toBe(heading)
      await shot(page, 'state25-3-map-lasso-reopened')
    } finally {
      await b.close()
    }
    expect(sha256File(f.db)).toBe(f.before)
  }, 240_000)

  for (const width of [1024, 1440, 1920]) {
    it(`the Tune screen says portal-episodic's unit=session hides the judged memories and widens it (${width} px)`, async () => {
      const b = await openBrowser(f.srv.url, { width })
      const { page, context } = b
      try {
        await page.getByRole('table', { name: 'Memories' }).locator('tbody tr[data-id]').first().waitFor()
        await nav(page, 'Evaluate').click()
        await page.getByRole('tab', { name: 'Tune' }).click()
        await page.getByLabel('Eval preset').selectOption('portal-episodic')
        const notice = page.getByTestId('tune-scope')
        await expect.poll(() => notice.textContent(), { timeout: 30_000 }).toMatch(/reaches 0 of [\d,]+ judged-relevant memories: unit=session excludes/)
        await shot(page, `state25-4-tune-scope-${width}`)
        await notice.getByRole('button', { name: 'Widen to unit=memory' }).click()
        await expect.poll(() => notice.count(), { timeout: 30_000 }).toBe(0)
        expect(JSON.parse(await page.getByLabel(/Config overrides/).inputValue())).toMatchObject({ unit: 'memory' })
        await shot(page, `state25-5-tune-widened-${width}`)
        if (width !== 1440) return
        // --- the preset and the widened overrides are in the address: a copied link and a reload open them
        await expect.poll(() => decodeURIComponent(new URL(page.url()).hash)).toMatch(/config=\{"unit":"memory"\}/)
        expect(new URL(page.url()).hash).toMatch(/preset=portal-episodic/)
        await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: new URL(f.srv.url).origin })
        const sameTuneStart = async (p: Page) => {
          await expect.poll(() => p.getByRole('tab', { name: 'Tune' }).getAttribute('aria-selected'), { timeout: 20_000 }).toBe('true')
          await expect.poll(() => p.getByLabel('Eval preset').inputValue(), { timeout: 20_000 }).toBe('portal-episodic')
          expect(JSON.parse(await p.getByLabel(/Config overrides/).inputValue())).toEqual({ unit: 'memory' })
          // the widened scope reaches the judged memories again: the scope check has nothing to say
          await p.getByText(/Searches on train cases starting from portal-episodic \+ your config/).waitFor({ timeout: 20_000 })
          await expect.poll(() => p.getByTestId('tune-scope').count(), { timeout: 30_000 }).toBe(0)
        }
        const tuneLink = await copyLink(page)
        await page.reload()
        await sameTuneStart(page)
        // --- the Tune tab's own settings (objective, k, configs, seed, knobs) survive a reload and a tab switch
        await page.getByLabel('Tune metric').selectOption('ndcg')
        await page.getByLabel('Tune k').fill('20')
        await page.getByLabel('Configs to try').fill('250')
        await page.getByLabel('Tune seed').fill('7')
        const knobs = page.getByRole('group', { name: 'Knobs to search' })
        await knobs.getByLabel('floor', { exact: true }).uncheck()
        await knobs.getByLabel('topK', { exact: true }).uncheck()
        await expect.poll(() => new URL(page.url()).hash).toMatch(/tuneOff=floor(%2C|,)topK/)
        const sameTuneSettings = async () => {
          await expect.poll(() => page.getByLabel('Tune metric').inputValue(), { timeout: 20_000 }).toBe('ndcg')
          expect(await page.getByLabel('Tune k').inputValue()).toBe('20')
          expect(await page.getByLabel('Configs to try').inputValue()).toBe('250')
          expect(await page.getByLabel('Tune seed').inputValue()).toBe('7')
          expect(await knobs.getByLabel('floor', { exact: true }).isChecked()).toBe(false)
          expect(await knobs.getByLabel('topK', { exact: true }).isChecked()).toBe(false)
          expect(await knobs.getByLabel('mode', { exact: true }).isChecked()).toBe(true)
        }
        await page.reload()
        await sameTuneSettings()
        await page.getByRole('tab', { name: /^Cases/ }).click()
        await page.getByRole('tab', { name: 'Tune' }).click()
        await sameTuneSettings()
        await shot(page, 'state25-9-tune-settings-reloaded')
        // --- a hand-edited address with bad values opens the defaults, never an error, and the address is cleaned
        const bad = new URL(page.url())
        bad.hash = `#/eval?tab=tune&preset=no-such-preset&config=${encodeURIComponent('{"topK":')}&k=ten&split=everything`
        await page.goto(bad.toString())
        await expect.poll(() => page.getByLabel('Eval preset').inputValue(), { timeout: 20_000 }).toBe('fieldguide')
        expect(await page.getByLabel(/Config overrides/).inputValue()).toBe('')
        expect(await page.getByLabel('Eval k').inputValue()).toBe('10')
        expect(await page.getByLabel('Eval split').inputValue()).toBe('all')
        await expect.poll(() => page.url()).not.toMatch(/no-such-preset|config=|k=|split=/)
        expect(new URL(page.url()).hash).toMatch(/tab=tune/)
        // --- the copied link of the widened start, opened as a new tab opens it (harness.ts reopenAsNewTab)
        await reopenAsNewTab(page, tuneLink)
        await sameTuneStart(page)
        await shot(page, 'state25-8-tune-widened-reopened')
      } finally {
        await b.close()
      }
    }, 120_000)
  }
})

describe.skipIf(!ready)('a mapped table without a created column', () => {
  let t: ReturnType<typeof tmpDir>
  let srv: Served
  let db: string
  beforeAll(async () => {
    t = tmpDir()
    db = path.join(t.dir, 'notes.sqlite')
    buildMappedFixture(db)
    const mapping = path.join(t.dir, 'mapping.json')
    fs.writeFileSync(mapping, JSON.stringify({ table: 'Agent Notes "v2"', columns: { content: 'Body Text' } }))
    srv = await serve(['--db', db, '--map', mapping])
  })
  afterAll(async () => {
    await srv?.stop()
    t?.cleanup()
  })

  it('shows "no time" in Memories, the detail and Recall, never 1970-01-01', async () => {
    const b = await openBrowser(srv.url, { width: 1440 })
    const { page } = b
    try {
      const table = page.getByRole('table', { name: 'Memories' })
      await table.locator('tbody tr[data-id]').first().waitFor({ timeout: 30_000 })
      await expect.poll(() => table.getByTestId('no-time').count()).toBeGreaterThan(0)
      expect(await table.textContent()).not.toMatch(/1970/)
      await table.locator('tbody tr[data-id]').first().click()
      await expect.poll(() => page.getByRole('complementary', { name: 'Memory detail' }).getByTestId('no-time').count(), { timeout: 10_000 }).toBeGreaterThan(0)
      expect(await page.locator('body').textContent()).not.toMatch(/1970-01-01/)
      await shot(page, 'state25-6-mapped-no-time')
      await nav(page, 'Recall').click()
      await page.getByLabel('Query (the raw utterance)').fill('deploy billing')
      await page.locator('.result').first().waitFor({ timeout: 20_000 })
      await page.locator('.result').first().click()
      await expect.poll(() => page.getByTestId('no-time').count(), { timeout: 10_000 }).toBeGreaterThan(0)
      {
        const body = (await page.locator('body').textContent())!
        const at = body.indexOf('1970-01-01')
        expect(at < 0 ? '' : body.slice(Math.max(0, at - 150), at + 60)).toBe('')
      }
      await shot(page, 'state25-7-mapped-recall-no-time')
    } finally {
      await b.close()
    }
  }, 120_000)
})
