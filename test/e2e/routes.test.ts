/**
 * Every screen has a URL (issue 12): a deep link to a memory, a trace event and
 * a recall request with a config override opens that state, survives a reload,
 * and back/forward walk the history. Keyboard: Escape closes a popover and a
 * dialog (focus returns to the opener), trace rows open with Enter, the session
 * cards are one tab stop. Browser mode on the demo DB, Debian's Chromium.
 */
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Page } from 'playwright-core'
import { chromiumPath, demoCopy, openBrowser, rendererBuilt, serve, shot, type Served } from './harness'
import { openSource } from '../../src/main/store/registry'
import { tmpDir } from '../helpers/tmp'

const ready = chromiumPath() && rendererBuilt()
if (!ready) console.warn('e2e skipped: needs /usr/bin/chromium (apt-get install -y chromium) and a built renderer (npm run build)')

/** The app's route as the address bar shows it (hash, decoded). */
async function route(page: Page): Promise<{ screen: string; params: Record<string, string> }> {
  const hash = await page.evaluate(() => (globalThis as unknown as { location: { hash: string } }).location.hash)
  const m = /^#\/([^?]*)(?:\?(.*))?$/.exec(hash)
  return { screen: m?.[1] ?? '', params: Object.fromEntries(new URLSearchParams(m?.[2] ?? '')) }
}

const current = (page: Page) => page.locator('nav[aria-label="Sections"] a[aria-current="page"]').textContent()
const focusedLabel = (page: Page) =>
  page.evaluate(() => {
    const el = (globalThis as unknown as { document: { activeElement: { getAttribute(n: string): string | null; textContent: string | null } | null } })
      .document.activeElement
    return el ? (el.getAttribute('aria-label') ?? el.textContent ?? '').trim() : ''
  })

describe.skipIf(!ready)('routes and keyboard (browser mode, demo DB)', () => {
  let t: ReturnType<typeof tmpDir>
  let srv: Served
  let base: string
  let memoryId: string
  let memoryText: string
  let eventId: string
  let eventQuery: string
  let injectedId: string
  beforeAll(async () => {
    t = tmpDir()
    const db = demoCopy(t.dir, 2000)
    // The facts the links point at, read from the DB itself (not through the UI).
    const s = openSource({ path: db, workspacePath: path.join(t.dir, 'probe.ws') })
    const m = s.memoriesPage({ limit: 50 }).rows[17]
    memoryId = m.id
    memoryText = s.getMemory(m.id)!.content
    const ev = s.eventsPage({ limit: 1000, agentId: 'agent-coder' }).rows.find((e) => e.preset === 'fieldguide' && e.results.length >= 3)!
    eventId = ev.id
    eventQuery = ev.query ?? ''
    injectedId = ev.results[1].id
    s.close()
    srv = await serve(['--db', db])
    base = srv.url.replace(/#.*$/, '')
  })
  afterAll(async () => {
    await srv?.stop()
    t?.cleanup()
  })

  it('deep links to a memory, an event and a recall request with an override survive a reload; back/forward walk the screens', async () => {
    const b = await openBrowser(srv.url)
    const { page } = b
    try {
      // The token is taken out of the address bar; with no route the open DB's memories show.
      await expect.poll(() => route(page)).toEqual({ screen: 'browse', params: {} })

      // 1. A memory.
      await page.goto(`${base}#/browse?memoryId=${memoryId}`)
      const detail = page.getByRole('complementary', { name: 'Memory detail' })
      await expect.poll(() => detail.getByTestId('memory-content').textContent()).toBe(memoryText)
      await page.reload()
      await expect.poll(() => detail.getByTestId('memory-content').textContent(), { timeout: 15_000 }).toBe(memoryText)
      expect(await current(page)).toBe('Memories')

      // A memory this DB does not have: said in words, not a raw error.
      await page.goto(`${base}#/browse?memoryId=m-not-here`)
      await expect.poll(() => detail.textContent()).toContain('Memory m-not-here is not in this DB.')

      // 2. A trace event and the memory asked about: both restored by a reload.
      await page.goto(`${base}#/trace?eventId=${eventId}&why=${injectedId}`)
      await expect.poll(() => page.getByTestId('event-query').textContent(), { timeout: 15_000 }).toContain(eventQuery.slice(0, 30))
      await page.reload()
      await expect.poll(() => page.getByTestId('event-query').textContent(), { timeout: 15_000 }).toContain(eventQuery.slice(0, 30))
      await expect
        .poll(async () => (await page.getByRole('table', { name: 'Injected memories' }).locator('tr[aria-selected="true"]').getAttribute('data-id')) ?? '')
        .toBe(injectedId)
      expect((await route(page)).params).toMatchObject({ eventId, why: injectedId })
      // The log's filter is part of the link too.
      await page.getByLabel('Agent').selectOption('agent-coder')
      await expect.poll(async () => (await route(page)).params.log).toBe(JSON.stringify({ agentId: 'agent-coder' }))
      await page.reload()
      await expect.poll(() => page.getByLabel('Agent').inputValue(), { timeout: 15_000 }).toBe('agent-coder')

      // 3. A recall request with one override over its preset: topK 3 instead of fieldguide's 5.
      const override = JSON.stringify({ topK: 3 })
      await page.goto(`${base}#/recall?query=${encodeURIComponent('deploy the tier migration')}&config=${encodeURIComponent(override)}`)
      const kept = page.locator('.result[data-gate="kept"]')
      await expect.poll(() => kept.count(), { timeout: 20_000 }).toBe(3)
      await page.reload()
      await expect.poll(() => page.getByLabel('Query (the raw utterance)').inputValue(), { timeout: 15_000 }).toBe('deploy the tier migration')
      await expect.poll(() => kept.count(), { timeout: 20_000 }).toBe(3)
      // The URL holds only what differs from the preset.
      expect(JSON.parse((await route(page)).params.config)).toEqual({ topK: 3 })
      await shot(page, 'routes-recall-override')

      // 4. Back/forward: recall → (back) trace event → (back) missing memory → (forward) trace → (forward) recall.
      await page.goBack()
      await expect.poll(() => current(page)).toBe('Decision trace')
      await expect.poll(() => page.getByTestId('event-query').textContent(), { timeout: 15_000 }).toContain(eventQuery.slice(0, 30))
      await page.goBack()
      await expect.poll(() => current(page)).toBe('Memories')
      await page.goForward()
      await expect.poll(() => current(page)).toBe('Decision trace')
      await page.goForward()
      await expect.poll(() => current(page)).toBe('Recall')
      await expect.poll(() => kept.count(), { timeout: 20_000 }).toBe(3)

      // 5. A selection made in a screen is a history step of its own: pick a memory, pick another, back = the first.
      await page.getByRole('link', { name: 'Memories', exact: true }).click()
      const rows = page.getByRole('table', { name: 'Memories' }).locator('tbody tr[data-id]')
      await rows.nth(3).waitFor()
      const first = await rows.nth(2).getAttribute('data-id')
      const second = await rows.nth(3).getAttribute('data-id')
      await rows.nth(2).click()
      await rows.nth(3).click()
      await expect.poll(async () => (await route(page)).params.memoryId).toBe(second)
      await page.goBack()
      await expect.poll(async () => (await route(page)).params.memoryId).toBe(first)
      await expect.poll(() => detail.locator('strong.mono').first().textContent()).toBe(first)
      await page.goBack()
      // the nav item reopened Memories as it was left (issue 25): with the missing memory of step 1 selected
      await expect.poll(async () => (await route(page)).params.memoryId).toBe('m-not-here')
      expect(await current(page)).toBe('Memories')
      await page.goBack()
      await expect.poll(() => current(page)).toBe('Recall')
    } finally {
      await b.close()
    }
  })

  it('Escape closes a popover and a dialog (focus back on the opener); trace rows open with Enter; the session cards are one tab stop', async () => {
    const b = await openBrowser(srv.url)
    const { page } = b
    try {
      // A popover: the embedder badge.
      const badge = page.locator('.embedstatus > button.badge').first()
      await badge.waitFor()
      const opener = (await badge.getAttribute('aria-label')) ?? (await badge.textContent())!.trim()
      await badge.click()
      const pop = page.getByRole('dialog', { name: 'Embedder settings' })
      await pop.waitFor()
      await page.keyboard.press('Escape')
      await expect.poll(() => pop.count()).toBe(0)
      expect(await focusedLabel(page)).toBe(opener)

      // A dialog: "Save as eval case" takes focus, Escape closes it, focus returns to the button.
      await page.goto(`${base}#/recall?query=${encodeURIComponent('deploy the tier migration')}`)
      const save = page.getByRole('button', { name: 'Save as eval case' })
      await save.waitFor({ timeout: 20_000 })
      await save.click()
      const dialog = page.getByRole('dialog', { name: 'New eval case' })
      await dialog.waitFor()
      await expect
        .poll(() =>
          dialog.evaluate((d: unknown) =>
            (d as { contains(n: unknown): boolean }).contains((globalThis as unknown as { document: { activeElement: unknown } }).document.activeElement),
          ),
        )
        .toBe(true)
      await page.keyboard.press('Escape')
      await expect.poll(() => dialog.count()).toBe(0)
      expect(await focusedLabel(page)).toBe('Save as eval case')

      // Trace: the injected rows are Tab stops; Enter on one explains it (the row is marked, the URL records it).
      await page.goto(`${base}#/trace?eventId=${eventId}`)
      const injected = page.getByRole('table', { name: 'Injected memories' }).locator('tbody tr[data-id]')
      await injected.nth(1).waitFor({ timeout: 15_000 })
      const tabindex = await injected.evaluateAll((els: { getAttribute(n: string): string | null }[]) => els.map((e) => e.getAttribute('tabindex')))
      expect(tabindex.length).toBeGreaterThanOrEqual(3)
      expect(tabindex.every((x) => x === '0')).toBe(true)
      await injected.nth(0).focus()
      await page.keyboard.press('Tab') // past the row's own "open" button
      await page.keyboard.press('Tab')
      expect(
        await page.evaluate(() =>
          (globalThis as unknown as { document: { activeElement: { getAttribute(n: string): string | null } } }).document.activeElement.getAttribute('data-id'),
        ),
      ).toBe(injectedId)
      await page.keyboard.press('Enter')
      await expect.poll(async () => (await route(page)).params.why).toBe(injectedId)
      await expect.poll(() => injected.nth(1).getAttribute('aria-selected')).toBe('true')

      // The replay diff's rows too.
      const diffRow = page
        .getByRole('table', { name: /Replay/ })
        .locator('tbody tr[data-id]')
        .first()
      if (await diffRow.count()) expect(await diffRow.getAttribute('tabindex')).toBe('0')

      // Sessions: one tab stop for all the cards, arrows move.
      await page.getByRole('link', { name: 'Memories', exact: true }).click()
      const cards = page.getByRole('listbox', { name: 'Sessions' }).getByRole('option')
      await cards.nth(2).waitFor()
      expect(await cards.count()).toBeGreaterThan(10)
      const stops = () => cards.evaluateAll((els: { getAttribute(n: string): string | null }[]) => els.filter((e) => e.getAttribute('tabindex') === '0').length)
      expect(await stops()).toBe(1)
      await cards.first().focus()
      await page.keyboard.press('ArrowDown')
      await page.keyboard.press('ArrowDown')
      expect(
        await cards.nth(2).evaluate((e: unknown) => e === (globalThis as unknown as { document: { activeElement: unknown } }).document.activeElement),
      ).toBe(true)
      expect(await stops()).toBe(1)
      await page.keyboard.press('Enter')
      await expect.poll(() => cards.nth(2).getAttribute('aria-selected')).toBe('true')
    } finally {
      await b.close()
    }
  })
})
