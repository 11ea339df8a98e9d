/**
 * Legibility audit (docs/guide/links-and-state.md "Legibility"): axe-core's WCAG 2 A/AA rules for
 * colour contrast (4.5:1 for text) and names (every control, link, image and landmark labelled), plus
 * our own check that every tab stop has an accessible name, on every screen at 1024, 1440 and
 * 1920 px, in the light and the dark theme. axe runs inside the page (its source evaluated through
 * the DevTools protocol, so the app's CSP is untouched).
 */
import fs from 'node:fs'
import { createRequire } from 'node:module'
import { describe, expect, it } from 'vitest'
import type { Page } from 'playwright-core'
import { chromiumPath, demoCopy, openBrowser, rendererBuilt, servedDb, shot } from './harness'

const ready = chromiumPath() && rendererBuilt()
if (!ready) console.warn('e2e skipped: needs /usr/bin/chromium (apt-get install -y chromium) and a built renderer (npm run build)')

const AXE = fs.readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8')

/** The axe rules this audit holds the UI to: contrast and names. */
const RULES = [
  'color-contrast',
  'label',
  'button-name',
  'link-name',
  'select-name',
  'input-button-name',
  'aria-input-field-name',
  'aria-toggle-field-name',
  'aria-command-name',
  'aria-meter-name',
  'aria-progressbar-name',
  'aria-tooltip-name',
  'image-alt',
  'role-img-alt',
  'svg-img-alt',
  'frame-title',
  'scrollable-region-focusable',
]

interface Finding {
  rule: string
  target: string
  summary: string
}

/**
 * axe's violations of RULES on the page as it is, plus every tab stop without an accessible name. Also a finding: a
 * colour-contrast check that axe (since 4.12) files as "incomplete" only because the text field is empty
 * (`emptyValue`) while both its colours were found and fail the ratio; axe 4.11 reported that as a violation
 * (docs/internals/testing.md, "stop 33").
 */
async function audit(page: Page): Promise<Finding[]> {
  if (!(await page.evaluate('typeof window.axe !== "undefined"'))) await page.evaluate(AXE)
  const axe = await page.evaluate<Finding[]>(
    `window.axe.run(document, { runOnly: { type: 'rule', values: ${JSON.stringify(RULES)} }, resultTypes: ['violations', 'incomplete'] }).then((r) => {
      const emptyField = (n) => n.any.some((c) => c.id === 'color-contrast' && c.data && c.data.messageKey === 'emptyValue' && c.data.fgColor && c.data.bgColor)
      const failed = [...r.violations, ...r.incomplete.filter((v) => v.id === 'color-contrast').map((v) => ({ ...v, nodes: v.nodes.filter(emptyField) }))]
      return failed.flatMap((v) => v.nodes.map((n) => ({ rule: v.id, target: n.target.join(' '), summary: (n.failureSummary || '').split('\\n').slice(0, 2).join(' ') })))
    })`,
  )
  // A tab stop (what Tab reaches) with no name: no label, aria-label(ledby), text, title, alt or placeholder.
  const unnamed = await page.evaluate<Finding[]>(`(() => {
    const sel = 'a[href], button, input:not([type=hidden]), select, textarea, summary, [tabindex]:not([tabindex="-1"])'
    const out = []
    for (const el of document.querySelectorAll(sel)) {
      if (el.disabled || el.getAttribute('tabindex') === '-1' || el.closest('[inert],[hidden]')) continue
      const r = el.getBoundingClientRect()
      if (r.width === 0 && r.height === 0) continue
      const lab = el.id ? document.querySelector('label[for="' + CSS.escape(el.id) + '"]') : null
      const by = (el.getAttribute('aria-labelledby') || '').split(/\\s+/).filter(Boolean).map((id) => document.getElementById(id)?.textContent || '').join('')
      const name = [el.getAttribute('aria-label'), by, lab?.textContent, el.closest('label')?.textContent, el.textContent, el.getAttribute('title'), el.getAttribute('alt'), el.getAttribute('placeholder'), el.type === 'submit' || el.type === 'button' ? el.value : '']
        .map((s) => (s || '').trim()).find((s) => s)
      if (!name) out.push({ rule: 'unnamed-tab-stop', target: el.tagName.toLowerCase() + (el.className ? '.' + String(el.className).split(' ').join('.') : ''), summary: el.outerHTML.slice(0, 120) })
    }
    return out
  })()`)
  return [...axe, ...unnamed]
}

const nav = (page: Page, name: string) => page.getByRole('navigation', { name: 'Sections' }).getByRole('link', { name, exact: true })

/** The widths every screen is audited at, in each theme. */
const WIDTHS = [1024, 1440, 1920]

/** Two frames after a resize: React's re-render on the media-query change and the layout it causes are done. */
const settle = (page: Page) => page.evaluate('new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(() => done(null))))')

describe.skipIf(!ready)('legibility audit (axe-core + tab-stop names)', () => {
  const f = servedDb((dir) => demoCopy(dir, 2000))

  // One walk per theme, each screen audited at every width: the window is resized in place (the app adapts to a
  // resize without remounting, as a person's window does), so the walk's page loads, recalls, comparisons and map are
  // paid twice instead of six times (docs/internals/testing.md, "Where the e2e CPU goes").
  for (const dark of [false, true])
    it(`every screen, ${dark ? 'dark' : 'light'}, at ${WIDTHS.join(', ')} px: no contrast or name violations`, async () => {
      const b = await openBrowser(f.srv.url, { width: WIDTHS[0], dark })
      const { page } = b
      const found: Record<string, Finding[]> = {}
      const check = async (screen: string, each?: (width: number) => Promise<unknown>) => {
        for (const width of WIDTHS) {
          await page.setViewportSize({ width, height: 900 })
          await settle(page)
          const v = await audit(page)
          if (v.length) found[`${screen} @ ${width} px`] = v
          await each?.(width)
        }
      }
      try {
        await page.getByRole('table', { name: 'Memories' }).locator('tbody tr[data-id]').first().waitFor()
        await page.getByRole('table', { name: 'Memories' }).locator('tbody tr[data-id]').first().click()
        await check('memories')
        await nav(page, 'Recall').click()
        await page.getByLabel('Query (the raw utterance)').fill('deploy the tier migration')
        await page.locator('.result.dropped').first().waitFor({ timeout: 20_000 })
        await page.locator('.result[data-gate="kept"]').first().click()
        await check('recall', (width) => shot(page, `a11y-${dark ? 'dark' : 'light'}-${width}-recall`))
        await page.getByRole('tab', { name: 'Context window' }).click()
        await check('recall-context-window')
        await nav(page, 'Compare').click()
        await page.getByRole('button', { name: 'Run comparison' }).click()
        await page.getByRole('button', { name: 'Run comparison' }).waitFor()
        await page.waitForTimeout(1500)
        await check('compare')
        await nav(page, 'Evaluate').click()
        await page.waitForTimeout(1500)
        await check('evaluate')
        // The Tune tab's scope notice and its "Widen to …" button (a start scope that hides the judged memories).
        await page.getByRole('tab', { name: 'Tune' }).click()
        await page.getByLabel('Eval preset').selectOption('portal-episodic')
        await page
          .getByTestId('tune-scope')
          .getByRole('button', { name: /^Widen to / })
          .waitFor({ timeout: 30_000 })
        await check('tune-scope')
        await page.getByLabel('Eval preset').selectOption('fieldguide')
        await nav(page, 'Decision trace').click()
        await page.getByRole('listbox', { name: 'Events' }).getByRole('option').first().click()
        await page.getByRole('main', { name: 'Event' }).getByRole('button', { name: 'Today' }).waitFor()
        await page.waitForTimeout(1000)
        await check('trace')
        await nav(page, 'Map').click()
        await page.getByTestId('map-status').waitFor({ timeout: 60_000 })
        await check('map')
        await nav(page, 'Library').click()
        await page.waitForTimeout(1000)
        await check('library')
      } finally {
        await b.close()
      }
      expect(found).toEqual({})
    }, 300_000)
})
