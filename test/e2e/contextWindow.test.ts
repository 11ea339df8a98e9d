/**
 * The full context window on the Recall screen (issue 12): seed 001's five blocks
 * in order, each with its tokens, counted again here from the block texts with
 * docs/internals/design.md's estimator (ceil(len/4)); the knowledge block's count is the Recall
 * screen's own; a small window cuts the oldest history turns, shown greyed.
 */
import { describe, expect, it } from 'vitest'
import { chromiumPath, demoCopy, openBrowser, rendererBuilt, servedDb, shot } from './harness'
import { sha256File } from '../helpers/tmp'

const ready = chromiumPath() && rendererBuilt()
/** docs/internals/design.md "Gates": the default token estimate is ceil(len/4). */
const ceil4 = (s: string) => (s === '' ? 0 : Math.ceil(s.length / 4))

describe.skipIf(!ready)('the full context window', () => {
  const f = servedDb((dir) => demoCopy(dir, 600))

  it('shows the five blocks in seed 001 order with token counts that match an independent count', async () => {
    const b = await openBrowser(f.srv.url)
    const { page } = b
    const query = 'deploy the tier migration'
    const system = 'You are the release assistant. Answer briefly and cite the runbook.'
    try {
      await page.getByRole('link', { name: 'Recall', exact: true }).click()
      await page.getByLabel('Query (the raw utterance)').fill(query)
      await page.locator('.result[data-gate="kept"]').first().waitFor({ timeout: 20_000 })
      await page.getByRole('tab', { name: 'Context window' }).click()
      const cw = page.getByRole('region', { name: 'Full context window' })
      await cw.getByLabel('System prompt', { exact: true }).fill(system)
      await cw.getByLabel('Model window').selectOption('4096')
      const blocks = cw.locator('li[data-block]')
      await expect
        .poll(() => blocks.evaluateAll((els) => els.map((e) => (e as unknown as { dataset: { block: string } }).dataset.block)))
        .toEqual(['system', 'knowledge', 'episodes', 'history', 'current'])
      // Wait for the episodic recall and the session's turns to arrive.
      await expect.poll(() => cw.locator('li[data-block="history"] [data-testid="block-text"]').count(), { timeout: 20_000 }).toBe(1)
      await expect.poll(() => cw.locator('li[data-block="episodes"]').textContent(), { timeout: 20_000 }).not.toMatch(/Loading/)

      const tokens = async (key: string) => Number(await cw.locator(`li[data-block="${key}"] [data-testid="block-tokens"]`).getAttribute('data-tokens'))
      const text = async (key: string) => {
        const pre = cw.locator(`li[data-block="${key}"] [data-testid="block-text"]`)
        return (await pre.count()) ? ((await pre.textContent()) ?? '') : ''
      }
      expect(await tokens('system')).toBe(ceil4(system))
      const knowledge = await text('knowledge')
      expect(knowledge).not.toBe('')
      expect(await tokens('knowledge')).toBe(ceil4(knowledge))
      // One source: the same number as the Recall screen's context block.
      expect(await page.getByTestId('context-tokens').textContent()).toMatch(new RegExp(`^${await tokens('knowledge')} tokens`))
      expect(await tokens('episodes')).toBe(ceil4(await text('episodes')))
      const history = await text('history')
      expect(history).toMatch(/^(User|Assistant|System|Tool|Message): /)
      expect(await tokens('history')).toBe(ceil4(history))
      expect(await tokens('current')).toBe(ceil4(query))
      const sum = (await Promise.all(['system', 'knowledge', 'episodes', 'history', 'current'].map(tokens))).reduce((s, x) => s + x, 0)
      expect(await cw.getByTestId('cw-total').textContent()).toContain(`${sum.toLocaleString('en-US')} of 4,096 tokens`)
      await shot(page, 'context-window')

      // A window with room for only a few history tokens: the oldest turns are cut and shown greyed.
      const fixed = sum - (await tokens('history'))
      await cw.getByLabel('Model window').selectOption('custom')
      await cw.getByLabel('Custom window tokens').fill(String(fixed + 12))
      const cut = cw.locator('li[data-block="history"] [data-testid="block-cut"]')
      await cut.waitFor()
      expect(
        await cut.evaluate((e) => Number((globalThis as unknown as { getComputedStyle(x: unknown): { opacity: string } }).getComputedStyle(e).opacity)),
      ).toBeLessThan(1)
      expect(await tokens('history')).toBeLessThanOrEqual(12)
      expect(await tokens('history')).toBe(ceil4(await text('history')))
      await shot(page, 'context-window-cut')
      // The narrowest supported window, dark: the blocks wrap inside the centre column.
      await page.setViewportSize({ width: 1024, height: 700 })
      await page.emulateMedia({ colorScheme: 'dark' })
      const overflow = await page.evaluate(() => {
        const m = (globalThis as unknown as { document: { querySelector(s: string): { scrollWidth: number; clientWidth: number } } }).document.querySelector(
          'main',
        )
        return m.scrollWidth - m.clientWidth
      })
      expect(overflow).toBeLessThanOrEqual(0)
      await shot(page, 'context-window-1024-dark')
    } finally {
      await b.close()
    }
    expect(sha256File(f.db)).toBe(f.before)
  })
})
