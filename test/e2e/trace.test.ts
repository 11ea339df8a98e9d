/**
 * The decision trace in a real browser: timeline → event → replay diff (as
 * logged, then today with a config edit) → why-not → drivers, and in from a
 * memory's detail pane. Screenshots: test/e2e/__screenshots__/trace-*.png.
 */
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { chromiumPath, demoCopy, openBrowser, rendererBuilt, serve, shot, type PageElement, type Served } from './harness'
import { openSource } from '../../src/main/store/registry'

import { sha256File, tmpDir } from '../helpers/tmp'

const ready = chromiumPath() && rendererBuilt()
if (!ready) console.warn('e2e skipped: needs /usr/bin/chromium (apt-get install -y chromium) and a built renderer (npm run build)')

describe.skipIf(!ready)('decision trace: browser mode on the demo DB', () => {
  let t: ReturnType<typeof tmpDir>
  let db: string
  let srv: Served
  let before: string
  let eventId: string
  let injectedId: string
  beforeAll(async () => {
    t = tmpDir()
    db = demoCopy(t.dir, 2000)
    const s = openSource({ path: db, workspacePath: path.join(t.dir, 'probe.ws') })
    const ev = s.eventsPage({ limit: 1000, agentId: 'agent-coder' }).rows.find((e) => e.preset === 'fieldguide' && e.results.length >= 4)!
    eventId = ev.id
    injectedId = ev.results[0].id
    s.close()
    before = sha256File(db)
    srv = await serve(['--db', db])
  })
  afterAll(async () => {
    await srv?.stop()
    t?.cleanup()
  })

  it('timeline → event → replay diff → today → why-not → drivers; the DB bytes are unchanged', async () => {
    const b = await openBrowser(srv.url)
    const { page } = b
    try {
      await page.getByRole('link', { name: 'Decision trace' }).click()
      const log = page.getByRole('listbox', { name: 'Events' })
      await log.getByRole('option').first().waitFor()
      await expect.poll(() => page.getByTestId('event-count').textContent()).toMatch(/\d+ events/)
      // the timeline chart draws bars; clicking one zooms the log into its window
      const all = await page.getByTestId('event-count').textContent()
      await page.locator('.tr-chart .recharts-bar-rectangle').first().click()
      await page.getByRole('button', { name: 'Clear time window' }).waitFor()
      await expect.poll(() => page.getByTestId('event-count').textContent()).not.toBe(all)
      await page.getByRole('button', { name: 'Clear time window' }).click()
      await expect.poll(() => page.getByTestId('event-count').textContent()).toBe(all)
      // filter the log to the coder agent, find the event
      await page.getByLabel('Agent').selectOption('agent-coder')
      await expect
        .poll(async () =>
          (await log.getByRole('option').evaluateAll((els: PageElement[]) => els.map((e) => e.getAttribute('data-agent')))).every((a) => a === 'agent-coder'),
        )
        .toBe(true)
      const row = log.locator(`[data-id="${eventId}"]`)
      await row.scrollIntoViewIfNeeded()
      await row.click()
      const main = page.getByRole('main', { name: 'Event' })
      await main.getByText(eventId, { exact: true }).waitFor()
      await main.getByRole('table', { name: 'Injected memories' }).locator('tbody tr').first().waitFor()
      // replay as logged: identical
      const verdict = main.getByTestId('replay-logged').getByRole('status')
      await expect.poll(() => verdict.textContent()).toContain('Identical to the log')
      await shot(page, 'trace-event')

      // today, with a config edit: differences, each explained
      await main.getByRole('button', { name: 'Today' }).click()
      await main.getByLabel('Config edits').fill('{"weights": {"recency": 0.4}}')
      await main.getByRole('button', { name: 'Replay with these edits' }).click()
      const today = main.getByTestId('replay-current')
      await expect
        .poll(async () => (await today.getByRole('list', { name: 'Replay notes' }).textContent()) ?? '')
        .toContain('config differs: weights.recency 0.25 → 0.4')
      await expect.poll(() => today.getByRole('status').textContent()).toContain('Differs from the log')
      expect(await today.locator('.tr-causes li').count()).toBeGreaterThan(0)
      await today.getByRole('status').evaluate((el: PageElement) => el.scrollIntoView({ block: 'start' }))
      await shot(page, 'trace-replay-today')

      // why-not: pick a dropped candidate from the event's candidates
      const side = page.getByRole('complementary', { name: 'Explain' })
      const pick = side.getByLabel('Pick a candidate')
      const options = await pick.locator('option').allTextContents()
      const dropped = options.find((o) => / · topK · /.test(o)) ?? options.find((o) => /· (floor|topK|minSimilarity|budget) ·/.test(o))
      expect(dropped).toBeTruthy()
      const droppedId = dropped!.split(' · ')[0]
      await pick.selectOption(droppedId)
      await expect.poll(() => side.getByTestId('why-status').textContent()).toMatch(/dropped|outside/)
      await side.getByTestId('why-best').waitFor()
      expect(await side.getByTestId('why-best').textContent()).toMatch(/Smallest single change — verified by re-running the recall/)
      expect(await side.getByRole('table', { name: 'Single changes' }).locator('tbody tr').count()).toBe(10)
      await shot(page, 'trace-why-not')

      // drivers
      await side.getByRole('tab', { name: 'Drivers' }).click()
      await side.getByTestId('mattered-most').waitFor()
      expect(await side.getByRole('table', { name: 'Drivers table' }).locator('tbody tr').count()).toBeGreaterThanOrEqual(4)
      await shot(page, 'trace-drivers')
    } finally {
      await b.close()
    }
    expect(sha256File(db)).toBe(before)
  })

  it('round trip: an injected memory → its detail pane → "Recalled in N events" → back to the trace', async () => {
    const b = await openBrowser(srv.url)
    const { page } = b
    try {
      await page.getByRole('link', { name: 'Decision trace' }).click()
      await page.getByLabel('Agent').selectOption('agent-coder')
      const row = page.getByRole('listbox', { name: 'Events' }).locator(`[data-id="${eventId}"]`)
      await row.scrollIntoViewIfNeeded()
      await row.click()
      const injected = page.getByRole('table', { name: 'Injected memories' })
      await injected
        .locator(`tr[data-id="${injectedId}"]`)
        .getByRole('button', { name: `open memory ${injectedId}` })
        .click()
      const detail = page.getByRole('complementary', { name: 'Memory detail' })
      await detail.getByText(injectedId, { exact: true }).waitFor()
      await detail.getByText(/Recalled in \d+ events?/).waitFor()
      await detail.locator('ul li a').first().click()
      const main = page.getByRole('main', { name: 'Event' })
      await main.getByRole('table', { name: 'Injected memories' }).locator(`tr[data-id="${injectedId}"]`).waitFor()
      // the log on the left is the same list, filterable; the why-not panel explains the memory it came from
      await shot(page, 'trace-from-memory')
    } finally {
      await b.close()
    }
  })

  it('dark mode: an event with a why-not open', async () => {
    const b = await openBrowser(srv.url, { dark: true })
    const { page } = b
    try {
      await page.getByRole('link', { name: 'Decision trace' }).click()
      await page.getByLabel('Agent').selectOption('agent-coder')
      const row = page.getByRole('listbox', { name: 'Events' }).locator(`[data-id="${eventId}"]`)
      await row.scrollIntoViewIfNeeded()
      await row.click()
      await page.getByRole('table', { name: 'Injected memories' }).locator(`tr[data-id="${injectedId}"]`).click()
      const side = page.getByRole('complementary', { name: 'Explain' })
      await expect.poll(() => side.getByTestId('why-status').textContent()).toBe('injected')
      await shot(page, 'trace-dark')
    } finally {
      await b.close()
    }
  })
})
