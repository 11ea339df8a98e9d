/**
 * The workbench as a person uses it, in Debian's Chromium against browser mode
 * on the demo DB: filter memories by kind → run a recall → drag the recency
 * weight and watch the order change → read why a dropped memory was dropped →
 * compare two presets → read the context preview. Screenshots of each screen.
 */
import { describe, expect, it } from 'vitest'
import type { Page } from 'playwright-core'
import { chromiumPath, demoCopy, openBrowser, type PageElement, type PageGlobals, rendererBuilt, servedDb, shot } from './harness'
import { sha256File } from '../helpers/tmp'

const ready = chromiumPath() && rendererBuilt()
if (!ready) console.warn('e2e skipped: needs /usr/bin/chromium (apt-get install -y chromium) and a built renderer (npm run build)')

async function injectedOrder(page: Page): Promise<string[]> {
  return page.locator('.result[data-gate="kept"]').evaluateAll((els: PageElement[]) => els.map((e) => e.getAttribute('data-id')!))
}

/** Drag a range input's thumb with the mouse from its current value to `to` (0..1 of its width). */
async function dragSlider(page: Page, label: string, to: number): Promise<void> {
  const input = page.getByRole('slider', { name: label, exact: true })
  const box = (await input.boundingBox())!
  const min = Number(await input.getAttribute('min'))
  const max = Number(await input.getAttribute('max'))
  const value = Number(await input.inputValue())
  const x0 = box.x + ((value - min) / (max - min)) * box.width
  const y = box.y + box.height / 2
  await page.mouse.move(x0, y)
  await page.mouse.down()
  for (let i = 1; i <= 10; i++) await page.mouse.move(x0 + ((box.x + to * box.width - x0) * i) / 10, y)
  await page.mouse.up()
}

describe.skipIf(!ready)('workbench flow (browser mode, demo DB)', () => {
  const f = servedDb((dir) => demoCopy(dir, 2000))

  it('filter → recall → drag recency → why dropped → compare → context', async () => {
    const b = await openBrowser(f.srv.url)
    const { page } = b
    try {
      // 1. Filter memories by kind.
      const table = page.getByRole('table', { name: 'Memories' })
      await table.locator('tbody tr[data-id]').first().waitFor()
      await page.getByLabel('Kind').selectOption('procedural')
      await expect.poll(async () => (await table.locator('tbody tr[data-id] .pill-kind').allTextContents()).every((k) => k === 'procedural')).toBe(true)
      await shot(page, 'workbench-1-memories-procedural')

      // 2. Run a recall (fieldguide, the default preset) for one agent.
      await page.getByRole('link', { name: 'Recall', exact: true }).click()
      await page.getByLabel('Query (the raw utterance)').fill('deploy the tier migration')
      await page.getByLabel('Scope agent').selectOption('agent-coder')
      await page.locator('.result[data-gate="kept"]').first().waitFor({ timeout: 20_000 })
      await expect.poll(() => page.getByTestId('rerank-status').textContent()).toMatch(/query|re-ranked/)
      const first = await injectedOrder(page)
      expect(first.length).toBeGreaterThan(0)
      await shot(page, 'workbench-2-recall')

      // 3. Drag the recency weight to the right: the order changes, locally (no round trip).
      await dragSlider(page, 'Recency', 0.95)
      await expect.poll(async () => JSON.stringify(await injectedOrder(page))).not.toBe(JSON.stringify(first))
      await expect.poll(() => page.getByTestId('rerank-status').textContent()).toMatch(/re-ranked locally in [\d.]+ ms/)
      const recencyValue = Number(await page.getByRole('slider', { name: 'Recency', exact: true }).inputValue())
      expect(recencyValue).toBeGreaterThan(0.8)
      // Rank-change arrows or NEW badges appear.
      await expect.poll(() => page.locator('.chg.up, .chg.down, .chg.new').count()).toBeGreaterThan(0)
      await shot(page, 'workbench-3-recency-dragged')

      // 3b. Held mid-drag (dragFastPath.ts): the list, the header's numbers and the other weights follow each step
      // without a render of the screen, the context block waits under its veil; let go, the screen renders that state.
      const recency = page.getByRole('slider', { name: 'Recency', exact: true })
      const rbox = (await recency.boundingBox())!
      const ry = rbox.y + rbox.height / 2
      await page.mouse.move(rbox.x + 0.9 * rbox.width, ry)
      await page.mouse.down()
      for (let i = 1; i <= 6; i++) await page.mouse.move(rbox.x + (0.9 - (0.6 * i) / 6) * rbox.width, ry)
      // Read at once, in one evaluate: held still for 0.4 s the screen renders the drag's state and lifts the veil.
      await shot(page, 'workbench-3b-recency-held')
      const veiled = await page.evaluate(() => {
        // The page's globals (this file compiles without the DOM's types).
        const w = globalThis as unknown as {
          document: { querySelector(s: string): { hasAttribute(n: string): boolean } }
          getComputedStyle(e: unknown, pseudo: string): { content: string }
        }
        const root = w.document.querySelector('.recall')
        return { drag: root.hasAttribute('data-drag'), veil: w.getComputedStyle(w.document.querySelector('.ctx'), '::after').content }
      })
      // Unless the machine was too slow to keep the steps within 0.4 s of each other.
      if (veiled.drag) expect(veiled.veil).toBe('""')
      const heldValue = await recency.inputValue()
      expect(Number(heldValue)).toBeLessThan(0.5)
      // The thumb's value, its output and the list's bars follow the pointer while held.
      expect(await page.locator('.slider-value').nth(2).textContent()).toBe(Number(heldValue).toFixed(2))
      const midOrder = await injectedOrder(page)
      const midCounts = await page.getByTestId('recall-counts').textContent()
      await page.mouse.up()
      await expect.poll(() => page.locator('.recall').getAttribute('data-drag')).toBeNull()
      // The render at release shows what the held steps showed.
      expect(await injectedOrder(page)).toEqual(midOrder)
      expect(await page.getByTestId('recall-counts').textContent()).toBe(midCounts)
      expect(await recency.inputValue()).toBe(heldValue)
      await shot(page, 'workbench-3c-recency-released')

      // 4. A dropped memory says why it was dropped.
      const dropped = page.locator('.result.dropped').first()
      await dropped.click()
      const detail = page.getByRole('region', { name: 'Candidate detail' })
      await expect.poll(() => detail.textContent()).toMatch(/Why dropped: (beyond topK|score below the floor|over the token budget)/)
      await shot(page, 'workbench-4-why-dropped')

      // 5. Context preview: the exact fieldguide block with its token count.
      const ctx = page.getByRole('region', { name: 'Context preview' })
      await expect.poll(() => ctx.getByTestId('context-text').textContent()).toMatch(/^Recalled memory \(evidence, not policy\):\n\[recalled /)
      expect(await ctx.getByTestId('context-tokens').textContent()).toMatch(/^\d+ tokens/)

      // 6. Compare two presets.
      await page.getByRole('button', { name: 'Compare presets →' }).click()
      await page.getByRole('button', { name: 'Run comparison' }).click()
      await page.getByRole('region', { name: 'Overlap' }).waitFor()
      expect(await page.getByRole('region', { name: 'Overlap' }).textContent()).toMatch(/J \d\.\d\d · RBO \d\.\d\d/)
      await page.getByRole('region', { name: 'Run 2 results' }).waitFor()
      await shot(page, 'workbench-5-compare')
    } finally {
      await b.close()
    }
    expect(sha256File(f.db)).toBe(f.before)
  })

  it('the renderer cannot reach Node, and the CSP blocks inline scripts and foreign connections', async () => {
    const b = await openBrowser(f.srv.url)
    const { page } = b
    try {
      await page.getByRole('table', { name: 'Memories' }).locator('tbody tr[data-id]').first().waitFor()
      const probe = await page.evaluate(async () => {
        // Runs in the page; this file compiles without DOM types, so the page's globals are declared in the harness.
        const w = globalThis as unknown as PageGlobals
        const s = w.document.createElement('script')
        s.textContent = 'window.__inlineRan = true'
        w.document.body.appendChild(s)
        let foreign = 'allowed'
        try {
          await fetch('http://example.invalid/')
        } catch {
          foreign = 'blocked'
        }
        return { require: typeof w.require, process: typeof w.process, module: typeof w.module, inline: w.__inlineRan === true, foreign }
      })
      expect(probe).toEqual({ require: 'undefined', process: 'undefined', module: 'undefined', inline: false, foreign: 'blocked' })
    } finally {
      await b.close()
    }
  })
})
