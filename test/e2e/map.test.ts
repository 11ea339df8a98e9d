/**
 * The embedding map, end to end in Chromium (issue 12): an eval case's map with
 * the query, the hits and the missed memories marked on the canvas; sampling
 * said on screen; PCA then UMAP; hover, lasso and click.
 */
import { describe, expect, it } from 'vitest'
import { chromiumPath, openBrowser, rendererBuilt, servedDb, shot, type PageGlobals } from './harness'
import { demoWithCases } from '../helpers/evalFixture'
import { sha256File } from '../helpers/tmp'

const ready = chromiumPath() && rendererBuilt()

/** Canvas pixels close to a CSS variable's colour (counted in the page). */
async function countColour(page: import('playwright-core').Page, variable: string): Promise<{ count: number; at: [number, number] | null }> {
  return page.evaluate((v) => {
    const g = globalThis as unknown as PageGlobals & {
      document: { querySelector(s: string): { getContext(k: string): unknown; width: number; height: number } | null }
      getComputedStyle(e: unknown): { getPropertyValue(p: string): string }
      devicePixelRatio: number
    }
    const canvas = g.document.querySelector('canvas[data-testid="map-points"]')!
    const probe = g.document.createElement('span') as unknown as { style: { color: string } }
    probe.style.color = `var(${v})`
    g.document.body.appendChild(probe)
    const rgb = (g.getComputedStyle(probe).getPropertyValue('color').match(/\d+/g) ?? []).map(Number)
    const ctx = canvas.getContext('2d') as { getImageData(x: number, y: number, w: number, h: number): { data: Uint8ClampedArray } }
    const d = ctx.getImageData(0, 0, canvas.width, canvas.height).data
    let count = 0
    let at: [number, number] | null = null
    for (let i = 0; i < d.length; i += 4) {
      if (d[i + 3] > 200 && Math.abs(d[i] - rgb[0]) < 12 && Math.abs(d[i + 1] - rgb[1]) < 12 && Math.abs(d[i + 2] - rgb[2]) < 12) {
        count++
        if (!at) at = [((i / 4) % canvas.width) / g.devicePixelRatio, Math.floor(i / 4 / canvas.width) / g.devicePixelRatio]
      }
    }
    return { count, at }
  }, variable)
}

describe.skipIf(!ready)('the embedding map', () => {
  const expected = { relevant: 0, query: '' }
  const f = servedDb((dir) => {
    const fx = demoWithCases(dir, { memories: 1500, cases: 10 })
    const c = fx.store.workspace.getCase('t-0')
    // Relevant memories with a stored vector: those the map can show (all are in the case's agent scope).
    expected.relevant = fx.store.idsWithEmbedding(c.relevant.map((r) => r.id)).size
    expected.query = c.query
    fx.store.close()
    return fx.db
  })

  it('maps an eval case: sampled and said so, the query, hits and misses marked, PCA then UMAP; hover, lasso, click', async () => {
    expect(expected.relevant).toBeGreaterThan(0)
    const b = await openBrowser(f.srv.url)
    const { page } = b
    try {
      await page.getByRole('button', { name: 'Map', exact: true }).click()
      await page.getByLabel('Map source').selectOption('case')
      await page.getByLabel('Eval case').selectOption('t-0')
      await page.getByLabel('Points at most').fill('400')
      await page.getByRole('button', { name: 'Build map' }).click()
      const status = page.getByTestId('map-status')
      await expect.poll(() => status.textContent(), { timeout: 60_000 }).toMatch(/Showing 400 of [\d,]+ memories/)
      expect(await status.textContent()).toMatch(/sampled/)
      expect(await status.textContent()).toMatch(/PCA: axes explain/)

      // Legend counts: hits + misses are the case's relevant memories (all kept by the sample).
      const legendCount = async (cls: string) =>
        Number((await page.locator(`.map-legend li[data-class="${cls}"] .mono`).textContent())?.replace(/,/g, '') ?? 'NaN')
      expect((await legendCount('hit')) + (await legendCount('missed'))).toBe(expected.relevant)
      expect(await legendCount('other')).toBeGreaterThan(300)

      // The marks are on the canvas in their colours, and the query star too.
      const marked = (await legendCount('missed')) > 0 ? '--danger' : '--ok'
      const px = await countColour(page, marked)
      expect(px.count).toBeGreaterThan(10)
      expect((await countColour(page, '--accent')).count + (await countColour(page, '--warn')).count).toBeGreaterThan(10)
      await shot(page, 'map-pca')

      // Hover a marked point: its text and what the recall did with it.
      const canvas = page.getByTestId('map-overlay')
      const box = (await canvas.boundingBox())!
      await page.mouse.move(box.x + px.at![0], box.y + px.at![1] + 2)
      await expect.poll(() => page.getByTestId('map-hover').textContent()).toMatch(/relevant/)

      // UMAP refines it (a job), started from the PCA frame; the query placement is named.
      await expect.poll(() => status.textContent(), { timeout: 120_000 }).toMatch(/UMAP \(\d+ neighbours, 200 epochs/)
      expect(await status.textContent()).toMatch(/query placed by the mean of its 5 nearest memories/)
      expect((await countColour(page, marked)).count).toBeGreaterThan(10)
      await shot(page, 'map-umap')

      // Lasso the whole map: every point is listed in the region.
      await page.mouse.move(box.x + 2, box.y + 2)
      await page.mouse.down()
      for (const [x, y] of [
        [box.width - 2, 2],
        [box.width - 2, box.height - 2],
        [2, box.height - 2],
      ])
        await page.mouse.move(box.x + x, box.y + y, { steps: 4 })
      await page.mouse.up()
      const region = page.getByRole('region', { name: 'Selected region' })
      await expect.poll(() => region.locator('h4').textContent()).toBe('400 in the region')
      await shot(page, 'map-lasso')

      // A click opens the memory.
      const first = (await region.locator('li .mono').first().textContent())!
      await region.locator('li button').first().click()
      await expect.poll(() => page.getByText(first).first().isVisible()).toBe(true)
    } finally {
      await b.close()
    }
    expect(sha256File(f.db)).toBe(f.before)
  })

  it('fits a 1024×700 window in dark mode (no horizontal overflow of the main pane)', async () => {
    const b = await openBrowser(f.srv.url, { dark: true, width: 1024, height: 700 })
    const { page } = b
    try {
      await page.getByRole('button', { name: 'Map', exact: true }).click()
      await page.getByLabel('Map query').fill(expected.query)
      await page.getByLabel('refine with UMAP').uncheck()
      await page.getByRole('button', { name: 'Build map' }).click()
      await expect.poll(() => page.getByTestId('map-status').textContent(), { timeout: 60_000 }).toMatch(/Showing [\d,]+ of/)
      const overflow = await page.evaluate(() => {
        const m = (
          globalThis as unknown as PageGlobals & { document: { querySelector(s: string): { scrollWidth: number; clientWidth: number } } }
        ).document.querySelector('main')
        return m.scrollWidth - m.clientWidth
      })
      expect(overflow).toBeLessThanOrEqual(0)
      await shot(page, 'map-1024-dark')
    } finally {
      await b.close()
    }
  })
})
