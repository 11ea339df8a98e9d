/**
 * Tables, export and the screens' small truths (issue 12, part 2), in Chromium
 * against browser mode on a demo DB: a filtered memories view exported as CSV
 * (every page, checked against the DB itself), exact duplicates grouped in
 * "More like this", Compare naming memories by id and saying why a run is
 * empty, a tune that survives leaving the screen, and the first paint with
 * recharts, zod and the Library kept out of the first screen's scripts. Screenshots of each.
 */
import fs from 'node:fs'
import path from 'node:path'
import Database from 'better-sqlite3'
import { describe, expect, it } from 'vitest'
import { chromiumPath, demoCopy, openBrowser, rendererBuilt, ROOT, servedDb, shot } from './harness'
import { sha256File } from '../helpers/tmp'

const ready = chromiumPath() && rendererBuilt()
if (!ready) console.warn('e2e skipped: needs /usr/bin/chromium (apt-get install -y chromium) and a built renderer (npm run build)')

/** RFC 4180 records (quoted fields, doubled quotes, CRLF), read here independently of the app's writer. */
function parseCsv(text: string): string[][] {
  const out: string[][] = []
  let rec: string[] = []
  let f = ''
  let q = false
  const endField = () => {
    rec.push(f)
    f = ''
  }
  for (let i = 0; i < text.length; i++) {
    const c = text[i]
    if (q) {
      if (c === '"' && text[i + 1] === '"') {
        f += '"'
        i++
      } else if (c === '"') q = false
      else f += c
    } else if (c === '"') q = true
    else if (c === ',') endField()
    else if (c === '\r' && text[i + 1] === '\n') {
      endField()
      out.push(rec)
      rec = []
      i++
    } else f += c
  }
  if (f || rec.length) {
    endField()
    out.push(rec)
  }
  return out
}

describe.skipIf(!ready)('views: export, duplicates, compare ids, tune survives', () => {
  const f = servedDb((dir) => demoCopy(dir, 3000))

  it('exports a filtered memories view as CSV: every row of the filter, cells as in the DB', async () => {
    const db = new Database(f.db, { readonly: true })
    const expected = db.prepare(`SELECT id, content, kind, agent_id FROM memories WHERE kind = 'episodic'`).all() as {
      id: string
      content: string
      kind: string
      agent_id: string
    }[]
    db.close()
    // more than one export page (1,000 rows), so paging is exercised
    expect(expected.length).toBeGreaterThan(1000)

    const b = await openBrowser(f.srv.url, { width: 1440, height: 900 })
    const { page } = b
    try {
      const table = page.getByRole('table', { name: 'Memories' })
      await table.locator('tbody tr[data-id]').first().waitFor()
      await page.getByLabel('Kind').selectOption('episodic')
      await expect.poll(() => page.getByTestId('table-total').textContent()).toBe(`${expected.length.toLocaleString('en-US')} rows`)
      // Kind and Role are not clipped at 1440: each cell's text fits its width
      const clipped = await table
        .locator('tbody tr[data-id] td[data-col="kind"], tbody tr[data-id] td[data-col="role"]')
        .evaluateAll((tds: { scrollWidth: number; clientWidth: number }[]) => tds.filter((td) => td.scrollWidth > td.clientWidth).length)
      expect(clipped).toBe(0)
      // the table fits the pane: no sideways scroll with the default columns
      const overflow = await page.locator('.dt-scroll').evaluate((el: { scrollWidth: number; clientWidth: number }) => el.scrollWidth - el.clientWidth)
      expect(overflow).toBeLessThanOrEqual(0)
      await shot(page, 'views-memories-1440')

      const [download] = await Promise.all([
        page.waitForEvent('download'),
        page.getByRole('group', { name: 'Export memories' }).getByRole('button', { name: 'CSV' }).click(),
      ])
      expect(download.suggestedFilename()).toBe('memories.csv')
      // saveAs, not path(): the shared Chromium is a server this file connects to, and a remote download has no local path.
      const saved = path.join(f.dir, 'memories.csv')
      await download.saveAs(saved)
      const text = fs.readFileSync(saved, 'utf8').replace(/^\uFEFF/, '')
      const rows = parseCsv(text)
      const header = rows[0]
      const body = rows.slice(1)
      expect(body).toHaveLength(expected.length)
      const col = (name: string) => header.indexOf(name)
      expect(col('content')).toBeGreaterThan(0)
      // the same set of ids, every one of the filter
      expect(new Set(body.map((r) => r[col('id')]))).toEqual(new Set(expected.map((e) => e.id)))
      // a cell: the content of one memory, as stored (the demo has no formula-like text)
      const one = expected[Math.floor(expected.length / 2)]
      const got = body.find((r) => r[col('id')] === one.id)!
      expect(got[col('content')]).toBe(one.content)
      expect(got[col('kind')]).toBe('episodic')
      expect(got[col('agent_id')]).toBe(one.agent_id)
      await page
        .getByTestId('export-note')
        .getByText(`${expected.length.toLocaleString('en-US')} rows exported`)
        .waitFor()

      // drag the Kind column's right edge 40 px wider; the width is remembered across a reload
      const kindTh = table.locator('th[data-col="kind"]')
      const w0 = (await kindTh.boundingBox())!.width
      const handle = (await kindTh.locator('.dt-resize').boundingBox())!
      await page.mouse.move(handle.x + handle.width / 2, handle.y + handle.height / 2)
      await page.mouse.down()
      for (let i = 1; i <= 8; i++) await page.mouse.move(handle.x + handle.width / 2 + i * 5, handle.y + handle.height / 2)
      await page.mouse.up()
      await expect.poll(async () => Math.round((await kindTh.boundingBox())!.width - w0)).toBe(40)
      await page.reload()
      await table.locator('tbody tr[data-id]').first().waitFor()
      await expect.poll(async () => Math.round((await table.locator('th[data-col="kind"]').boundingBox())!.width - w0)).toBe(40)

      // the column chooser shows a hidden column
      await page.getByRole('button', { name: /^Columns \d+\/9$/ }).click()
      await page.getByRole('group', { name: 'Memories columns' }).getByLabel('Turn').check()
      await table.locator('th[data-col="turn"]').waitFor()
      await shot(page, 'views-memories-columns')
      await page.keyboard.press('Escape')
      await expect.poll(() => page.getByRole('group', { name: 'Memories columns' }).count()).toBe(0)
    } finally {
      await b.close()
    }
  })

  it('searches as you type and groups exact duplicates in More like this, with their ids', async () => {
    const db = new Database(f.db, { readonly: true })
    // the text with the most exact copies in the DB
    const dup = db.prepare(`SELECT content, count(*) AS n FROM memories GROUP BY content ORDER BY n DESC LIMIT 1`).get() as { content: string; n: number }
    const dupIds = new Set((db.prepare(`SELECT id FROM memories WHERE content = ?`).all(dup.content) as { id: string }[]).map((r) => r.id))
    db.close()
    expect(dup.n).toBeGreaterThan(2)

    const b = await openBrowser(f.srv.url, { width: 1440, height: 900 })
    const { page } = b
    try {
      const table = page.getByRole('table', { name: 'Memories' })
      await table.locator('tbody tr[data-id]').first().waitFor()
      // no Enter: the filter follows the typing
      await page.getByLabel('Full-text search').pressSequentially(dup.content.split(' ').slice(0, 5).join(' '), { delay: 20 })
      await expect.poll(async () => (await table.locator('tbody tr[data-id] mark').count()) > 0, { timeout: 10_000 }).toBe(true)
      const first = table
        .locator('tbody tr[data-id]')
        .filter({ hasText: dup.content.slice(0, 30) })
        .first()
      const openedId = (await first.getAttribute('data-id'))!
      expect(dupIds.has(openedId)).toBe(true)
      await first.click()

      const similar = page.getByRole('list', { name: 'More like this' })
      await similar.locator('li').first().waitFor()
      const group = similar.locator('li').first()
      const ids = await group.locator('.similar-ids a').allTextContents()
      // several copies, shown as one entry with every id, all of them true copies (not the memory itself)
      expect(ids.length).toBeGreaterThan(1)
      for (const id of ids) expect(dupIds.has(id)).toBe(true)
      expect(ids).not.toContain(openedId)
      expect(await group.getAttribute('data-count')).toBe(String(ids.length))
      expect(await group.locator('.badge').textContent()).toBe(`×${ids.length}`)
      // the text appears once in the list
      const texts = await similar.locator('.similar-text').allTextContents()
      expect(texts.filter((t) => t === dup.content.slice(0, 160))).toHaveLength(1)
      await shot(page, 'views-more-like-this')
    } finally {
      await b.close()
    }
  })

  it('compare names memories by id and says why a run injected nothing; starts from my Recall settings', async () => {
    const b = await openBrowser(f.srv.url, { width: 1440, height: 900 })
    const { page } = b
    try {
      await page.getByRole('table', { name: 'Memories' }).locator('tbody tr[data-id]').first().waitFor()
      // Recall: a query, then "Compare presets →" takes these settings as run 1
      await page.getByRole('link', { name: 'Recall', exact: true }).click()
      await page.getByLabel('Query (the raw utterance)').fill('deploy the tier migration')
      await page.locator('.result[data-gate="kept"]').first().waitFor({ timeout: 20_000 })
      await page.getByRole('button', { name: 'Compare presets →' }).click()
      await page.getByText('my Recall settings · fieldguide').waitFor()

      // run 2: a floor no score reaches, so it injects nothing
      await page.getByLabel('Run 2 config patch').fill('{"floor": 0.99}')
      await page.getByRole('button', { name: 'Run comparison' }).click()
      const run1 = page.getByRole('region', { name: 'Run 1 results' })
      await run1.locator('li[data-id]').first().waitFor()
      // every listed memory shows its id
      for (const li of await run1.locator('li[data-id]').all()) expect(await li.locator('a.mono').textContent()).toBe(await li.getAttribute('data-id'))
      const empty = page.getByRole('region', { name: 'Run 2 results' }).getByTestId('compare-empty')
      await empty.waitFor()
      expect(await empty.textContent()).toMatch(/^Nothing injected\. .*floor/)
      // ranks table: the id column, and the text cut inside its own column
      const ranks = page.getByRole('region', { name: 'Rank deltas' })
      const firstRow = ranks.locator('tbody tr').first()
      expect(await firstRow.locator('td').first().textContent()).toBe(await firstRow.getAttribute('data-id'))
      const spill = await ranks
        .locator('td.c-text')
        .evaluateAll(
          (tds: { getBoundingClientRect(): { right: number }; nextElementSibling: { getBoundingClientRect(): { left: number } } | null }[]) =>
            tds.filter((td) => td.nextElementSibling && td.getBoundingClientRect().right > td.nextElementSibling.getBoundingClientRect().left + 0.5).length,
        )
      expect(spill).toBe(0)
      // three runs: the × buttons sit on the run's head line
      await page.getByRole('button', { name: '+ Add run' }).click()
      const head = page.locator('.slot').nth(2).locator('.slot-head')
      const [hb, xb] = [await head.boundingBox(), await head.getByRole('button', { name: 'Remove run 3' }).boundingBox()]
      expect(xb!.y + xb!.height).toBeLessThanOrEqual(hb!.y + hb!.height + 0.5)
      await shot(page, 'views-compare')
    } finally {
      await b.close()
    }
  })

  it('a finished tune is still shown after going to another screen and back', async () => {
    const b = await openBrowser(f.srv.url, { width: 1440, height: 900 })
    const { page } = b
    try {
      await page.getByRole('table', { name: 'Memories' }).locator('tbody tr[data-id]').first().waitFor()
      await page.getByRole('link', { name: 'Evaluate' }).click()
      await page.getByRole('tab', { name: 'Tune' }).click()
      await page.getByLabel('Configs to try').fill('40')
      await page.getByRole('button', { name: 'Start tuning' }).click()
      await page.getByTestId('tune-test').waitFor({ timeout: 90_000 })
      const before = await page.getByTestId('tune-test').textContent()

      await page.getByRole('link', { name: 'Memories' }).click()
      await page.getByRole('table', { name: 'Memories' }).waitFor()
      await page.getByRole('link', { name: 'Evaluate' }).click()
      await page.getByRole('tab', { name: 'Tune' }).click()
      // shown again without opening a saved report
      await page.getByTestId('tune-test').waitFor()
      expect(await page.getByTestId('tune-test').textContent()).toBe(before)
      await shot(page, 'views-tune-survives')

      // two eval runs: the history chart names them on its x-axis, as points
      for (const name of ['fieldguide as is', 'no floor']) {
        if (name === 'no floor') {
          await page.getByText(/Config overrides/).click()
          await page.getByLabel('Config overrides').fill('{"floor": null}')
        }
        await page.getByLabel('Run name').fill(name)
        await page.getByRole('button', { name: 'Run eval' }).click()
        await page.getByRole('tab', { name: /Runs/, selected: true }).waitFor({ timeout: 60_000 })
        await page.getByRole('table', { name: 'Eval runs' }).getByText(name).waitFor({ timeout: 60_000 })
      }
      const chart = page.getByRole('img', { name: /over runs$/ })
      await chart.locator('circle[data-run]').nth(1).waitFor()
      const ticks = await chart.locator('.recharts-xAxis-tick-labels text').allTextContents()
      expect(ticks).toEqual(expect.arrayContaining(['fieldguide as is', 'no floor']))
      // points only: the series draws no connecting path
      expect(await chart.locator('.recharts-line-curve[stroke]:not([stroke="none"])').count()).toBe(0)
      await chart.scrollIntoViewIfNeeded()
      await shot(page, 'views-history-chart')
    } finally {
      await b.close()
    }
    expect(sha256File(f.db)).toBe(f.before)
  })

  it('trace timeline: preset colours of their own, a legend and a y-axis', async () => {
    // One page for both themes: the scheme is switched in place (the colours are CSS variables under
    // prefers-color-scheme, read below from the computed styles), as layout.test.ts does for its screenshots.
    const b = await openBrowser(f.srv.url, { width: 1440, height: 900 })
    const { page } = b
    try {
      await page.getByRole('table', { name: 'Memories' }).locator('tbody tr[data-id]').first().waitFor()
      await page.getByRole('link', { name: 'Decision trace' }).click()
      for (const dark of [false, true]) {
        await page.emulateMedia({ colorScheme: dark ? 'dark' : 'light' })
        await page.evaluate('new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(() => done(null))))')
        expect(await page.evaluate("matchMedia('(prefers-color-scheme: dark)').matches")).toBe(dark)
        const legend = page.getByRole('list', { name: 'Presets in the timeline' })
        await legend.locator('li').first().waitFor()
        const colours = await page.evaluate(() => {
          const w = globalThis as unknown as {
            document: { documentElement: unknown; querySelectorAll(s: string): ArrayLike<unknown> }
            getComputedStyle(e: unknown): { getPropertyValue(n: string): string; backgroundColor: string }
          }
          const probe = (v: string) => {
            const root = w.getComputedStyle(w.document.documentElement)
            return root.getPropertyValue(v).trim().toLowerCase()
          }
          const features = ['--f-sim', '--f-lex', '--f-rec', '--f-sal'].map(probe)
          const legend = Array.from(w.document.querySelectorAll('.tr-legend i')).map((e) => w.getComputedStyle(e).backgroundColor)
          const bars = Array.from(w.document.querySelectorAll('.tr-chart .recharts-bar-rectangle path')).map((e) =>
            w.getComputedStyle(e).getPropertyValue('fill'),
          )
          return { features, legend, bars }
        })
        const rgb = (hex: string) => `rgb(${[1, 3, 5].map((i) => parseInt(hex.slice(i, i + 2), 16)).join(', ')})`
        const featureRgb = colours.features.map(rgb)
        expect(colours.legend.length).toBeGreaterThan(0)
        for (const c of [...colours.legend, ...colours.bars]) expect(featureRgb).not.toContain(c)
        // presets are told apart from each other too
        expect(new Set(colours.legend).size).toBe(colours.legend.length)
        // a y-axis with counts
        const yTicks = await page.locator('.tr-chart .recharts-yAxis-tick-labels text').allTextContents()
        expect(yTicks.length).toBeGreaterThan(1)
        for (const t of yTicks) expect(t).toMatch(/^\d+$/)
        await shot(page, `views-trace-timeline${dark ? '-dark' : ''}`)
      }
    } finally {
      await b.close()
    }
  })

  it('dark mode at 1280: the memories table with a memory open, and compare', async () => {
    const b = await openBrowser(f.srv.url, { width: 1280, height: 800, dark: true })
    const { page } = b
    try {
      const table = page.getByRole('table', { name: 'Memories' })
      await table.locator('tbody tr[data-id]').first().waitFor()
      await page.getByLabel('Kind').selectOption('procedural')
      await table.locator('tbody tr[data-id]').first().click()
      await page.getByRole('list', { name: 'More like this' }).locator('li').first().waitFor()
      await shot(page, 'views-memories-dark-1280')
      await page.getByRole('link', { name: 'Compare' }).click()
      await page.getByRole('button', { name: 'Run comparison' }).click()
      await page.getByRole('region', { name: 'Rank deltas' }).waitFor()
      await shot(page, 'views-compare-dark-1280')
    } finally {
      await b.close()
    }
  })

  it('first paint: measured, and the first screen loads no charting, schema or Library code', async () => {
    const b = await openBrowser(f.srv.url, { width: 1440, height: 900 })
    const { page } = b
    try {
      await page.getByRole('table', { name: 'Memories' }).locator('tbody tr[data-id]').first().waitFor()
      const m = await page.evaluate(() => {
        const p = globalThis.performance
        return {
          fcp: p.getEntriesByName('first-contentful-paint')[0]?.startTime ?? null,
          scripts: p
            .getEntriesByType('resource')
            .map((e) => e.name)
            .filter((n) => n.endsWith('.js')),
        }
      })
      expect(m.fcp).not.toBeNull()
      const assets = path.join(ROOT, 'out/renderer/assets')
      const loaded = m.scripts.map((u) => path.basename(new URL(u).pathname))
      // Each marker names code the first screen does not run: recharts' own class name, zod's (the schemas the
      // screens that validate settings build) and the Library's connect form (its region's name). Each marker is
      // real (some chunk has it); the first screen's scripts have none.
      const all = fs.readdirSync(assets).filter((n) => n.endsWith('.js'))
      for (const marker of ['recharts-wrapper', '$ZodObject', 'Database facts']) {
        expect(
          all.some((n) => fs.readFileSync(path.join(assets, n), 'utf8').includes(marker)),
          marker,
        ).toBe(true)
        for (const n of loaded) expect(fs.readFileSync(path.join(assets, n), 'utf8').includes(marker), `${marker} in ${n}`).toBe(false)
      }
      const kib = (n: string) => fs.statSync(path.join(assets, n)).size / 1024
      console.log(
        `first-contentful-paint ${m.fcp.toFixed(0)} ms; first screen loads ${loaded.length} scripts, ${loaded.reduce((s, n) => s + kib(n), 0).toFixed(0)} KiB: ${loaded.join(', ')}`,
      )
      expect(m.fcp).toBeLessThan(5000)
    } finally {
      await b.close()
    }
  })
})
