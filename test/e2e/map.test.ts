/**
 * The embedding map, end to end in Chromium (issue 12): an eval case's map with
 * the query, the hits and the missed memories marked on the canvas; sampling
 * said on screen; PCA then UMAP; hover, lasso and click.
 */
import { describe, expect, it } from 'vitest'
import { chromiumPath, openBrowser, rendererBuilt, servedDb, shot, waitForDrawnLayout, type PageGlobals } from './harness'
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

/**
 * The centre (CSS px on the map) of the marker drawn in a CSS variable's colour nearest `near`,
 * or of the first one found (top-left first): the centroid of its pixels, taken twice so a
 * neighbour's pixels at the edge of the first window drop out. Null when there is none.
 */
async function markerCentre(page: import('playwright-core').Page, variable: string, near?: [number, number]): Promise<[number, number] | null> {
  return page.evaluate(
    ([v, nearAt]) => {
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
      const dpr = g.devicePixelRatio
      const px: [number, number][] = []
      for (let i = 0; i < d.length; i += 4)
        if (d[i + 3] > 200 && Math.abs(d[i] - rgb[0]) < 12 && Math.abs(d[i + 1] - rgb[1]) < 12 && Math.abs(d[i + 2] - rgb[2]) < 12)
          px.push([((i / 4) % canvas.width) / dpr + 0.5 / dpr, Math.floor(i / 4 / canvas.width) / dpr + 0.5 / dpr])
      if (!px.length) return null
      let c = nearAt ?? px[0]
      for (const r of [12, 7]) {
        const inR = px.filter(([x, y]) => Math.hypot(x - c[0], y - c[1]) <= r)
        if (!inR.length) return null
        c = [inR.reduce((a, p) => a + p[0], 0) / inR.length, inR.reduce((a, p) => a + p[1], 0) / inR.length]
      }
      return c
    },
    [variable, near ?? null] as const,
  )
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
      await page.getByRole('link', { name: 'Map', exact: true }).click()
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
      await waitForDrawnLayout(page)
      expect((await countColour(page, marked)).count).toBeGreaterThan(10)
      expect((await countColour(page, '--accent')).count + (await countColour(page, '--warn')).count).toBeGreaterThan(10)
      await shot(page, 'map-pca')

      // UMAP refines it (a job), started from the PCA frame; the query placement is named.
      await expect.poll(() => status.textContent(), { timeout: 120_000 }).toMatch(/UMAP \(\d+ neighbours, 200 epochs/)
      expect(await status.textContent()).toMatch(/query placed by the mean of its 5 nearest memories/)
      await waitForDrawnLayout(page)
      const px = await countColour(page, marked)
      expect(px.count).toBeGreaterThan(10)
      await shot(page, 'map-umap')

      // Hover a marked point: its text and what the recall did with it. On the final (UMAP) layout: a point read
      // on the PCA frame moves when UMAP replaces it, which a loaded run can do between the read and the hover.
      // The marker's centre, not its first pixel: at a marker's edge a neighbour drawn close by can be the nearest point.
      const canvas = page.getByTestId('map-overlay')
      const box = (await canvas.boundingBox())!
      const centre = (await markerCentre(page, marked))!
      await page.mouse.move(box.x + centre[0], box.y + centre[1])
      await expect.poll(() => page.getByTestId('map-hover').textContent()).toMatch(/relevant/)

      // Lasso the whole map (Shift-drag; a plain drag pans): every point is listed in the region.
      await page.mouse.move(box.x + 2, box.y + 2)
      await page.keyboard.down('Shift')
      await page.mouse.down()
      for (const [x, y] of [
        [box.width - 2, 2],
        [box.width - 2, box.height - 2],
        [2, box.height - 2],
      ])
        await page.mouse.move(box.x + x, box.y + y, { steps: 4 })
      await page.mouse.up()
      await page.keyboard.up('Shift')
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

  it('zooms with the wheel about the cursor and pans by dragging; the same memory is under the cursor and in the tooltip; keys and Reset view', async () => {
    const b = await openBrowser(f.srv.url)
    const { page } = b
    try {
      await page.getByRole('link', { name: 'Map', exact: true }).click()
      await page.getByLabel('Map source').selectOption('case')
      await page.getByLabel('Eval case').selectOption('t-0')
      await page.getByLabel('Points at most').fill('400')
      await page.getByLabel('refine with UMAP').uncheck()
      await page.getByRole('button', { name: 'Build map' }).click()
      await expect.poll(() => page.getByTestId('map-status').textContent(), { timeout: 60_000 }).toMatch(/Showing 400 of/)
      expect(await page.getByTestId('map-keys').textContent()).toMatch(/Scroll: zoom .* drag: pan .* Shift-drag: lasso/)
      const canvas = page.getByTestId('map-overlay')
      const box = (await canvas.boundingBox())!
      const zoom = async () => Number(await canvas.getAttribute('data-zoom'))
      const tooltipId = () => page.getByTestId('map-hover').locator('.mono').first().textContent()
      const moveTo = (p: [number, number]) => page.mouse.move(box.x + p[0], box.y + p[1])

      // A marked memory (a relevant one: drawn on top) and its id from the tooltip at zoom 1.
      await waitForDrawnLayout(page)
      const marked = (await markerCentre(page, '--danger')) ? '--danger' : '--ok'
      const c0 = (await markerCentre(page, marked))!
      expect(c0).not.toBeNull()
      await moveTo(c0)
      await expect.poll(() => page.getByTestId('map-hover').textContent()).toMatch(/relevant/)
      const id0 = (await tooltipId())!
      expect(id0).toMatch(/\S/)
      await shot(page, 'map-zoom-1x')

      // Two wheel notches up with the cursor on it: zoomed in by e^(2·200·0.002) = 2.23×, and it stays under the cursor.
      await page.mouse.wheel(0, -200)
      await page.mouse.wheel(0, -200)
      await expect.poll(zoom).toBeCloseTo(Math.exp(0.8), 2)
      expect(await page.getByTestId('map-zoom').textContent()).toBe('2.2×')
      expect(await page.getByTestId('map-hover').count()).toBe(0) // the card waits for the next pointer move
      const z0 = (await markerCentre(page, marked, c0))!
      expect(Math.hypot(z0[0] - c0[0], z0[1] - c0[1])).toBeLessThan(2.5)
      await moveTo([c0[0] + 40, c0[1] + 40])
      await moveTo(c0)
      await expect.poll(tooltipId).toBe(id0)
      await shot(page, 'map-zoom-2x')

      // A drag pans by exactly the drag: the memory is drawn, hovered and named at its new place.
      const d: [number, number] = [c0[0] > box.width / 2 ? -160 : 160, c0[1] > box.height / 2 ? -90 : 90]
      await page.mouse.down()
      await page.mouse.move(box.x + c0[0] + d[0], box.y + c0[1] + d[1], { steps: 8 })
      await page.mouse.up()
      const c1: [number, number] = [c0[0] + d[0], c0[1] + d[1]]
      const z1 = (await markerCentre(page, marked, c1))!
      expect(Math.hypot(z1[0] - c1[0], z1[1] - c1[1])).toBeLessThan(2.5)
      expect(await zoom()).toBeCloseTo(Math.exp(0.8), 2) // a drag does not zoom
      await moveTo([c1[0] + 40, c1[1] + 40])
      await moveTo(c1)
      await expect.poll(tooltipId).toBe(id0)
      expect(await page.getByRole('region', { name: 'Selected region' }).count()).toBe(0) // a pan selects nothing
      await shot(page, 'map-zoom-panned-hover')

      // The Lasso toggle: a plain drag now selects. Around the whole canvas at this zoom it lists what is on screen, the memory among them.
      await page.getByRole('button', { name: 'Lasso' }).click()
      expect(await page.getByRole('button', { name: 'Lasso' }).getAttribute('aria-pressed')).toBe('true')
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
      const inRegion = Number((await region.locator('h4').textContent())?.match(/^(\d+) in the region$/)?.[1] ?? NaN)
      expect(inRegion).toBeGreaterThan(0)
      expect(inRegion).toBeLessThan(400) // zoomed in: only what is on screen
      expect(await region.locator('li .mono').allTextContents()).toContain(id0)
      expect(await zoom()).toBeCloseTo(Math.exp(0.8), 2) // the lasso did not pan
      await shot(page, 'map-zoom-lasso')
      await region.getByRole('button', { name: 'Clear' }).click()
      await page.getByRole('button', { name: 'Lasso' }).click()

      // The keys, with the map focused: 0 resets (the memory is back at c0), + zooms by 1.25, the arrows pan.
      await canvas.focus()
      await page.keyboard.press('0')
      await expect.poll(zoom).toBe(1)
      const back = (await markerCentre(page, marked, c0))!
      expect(Math.hypot(back[0] - c0[0], back[1] - c0[1])).toBeLessThan(1.5)
      await page.keyboard.press('+')
      await page.keyboard.press('+')
      await expect.poll(zoom).toBeCloseTo(1.5625, 3)
      await page.keyboard.press('-')
      await expect.poll(zoom).toBeCloseTo(1.25, 3)
      // An arrow pans by 40 px: the view moves that way, so the drawing (any marker on it) moves 40 px the other way.
      const zb = (await markerCentre(page, '--warn'))!
      const step = zb[0] < 100 ? 40 : -40
      await page.keyboard.press(step < 0 ? 'ArrowRight' : 'ArrowLeft')
      await expect.poll(async () => (await markerCentre(page, '--warn', [zb[0] + step, zb[1]]))?.[0] ?? NaN).toBeCloseTo(zb[0] + step, 0)
      expect(await zoom()).toBeCloseTo(1.25, 3)
      // Reset view (the button), and a double-click.
      await page.getByRole('button', { name: 'Reset view' }).click()
      await expect.poll(zoom).toBe(1)
      expect(await page.getByRole('button', { name: 'Reset view' }).isDisabled()).toBe(true)
      // Zoomed out (0.64×) the corners are empty, so the double-click's clicks open nothing.
      await page.getByRole('button', { name: 'Zoom out' }).click()
      await page.getByRole('button', { name: 'Zoom out' }).click()
      await expect.poll(zoom).toBeCloseTo(0.64, 3)
      await page.mouse.dblclick(box.x + 3, box.y + box.height - 3)
      await expect.poll(zoom).toBe(1)
    } finally {
      await b.close()
    }
  })

  it('fits a 1024×700 window in dark mode (no horizontal overflow of the main pane)', async () => {
    const b = await openBrowser(f.srv.url, { dark: true, width: 1024, height: 700 })
    const { page } = b
    try {
      await page.getByRole('link', { name: 'Map', exact: true }).click()
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
