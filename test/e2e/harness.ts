/**
 * End-to-end harness: runs `recallscope serve` (browser mode, the real CLI and
 * server) on a DB in a temp home, and drives Debian's Chromium with
 * playwright-core. Screenshots go to test/e2e/__screenshots__/ (git-ignored).
 */
import fs from 'node:fs'
import path from 'node:path'
import { chromium, type Browser as PlaywrightBrowser, type BrowserContext, type CDPSession, type Page } from 'playwright-core'
import { afterAll, beforeAll, expect, inject, onTestFinished } from 'vitest'
import { DEMOS_FAILED, DEMOS_READY, demoFileName, type DEMO_SIZES } from './demoSizes'
import { CHROMIUM_ARGS, findChromium } from '../helpers/chromium'
import { serve, type Served } from '../helpers/serveProcess'
import { sha256File, tmpDir } from '../helpers/tmp'

export const ROOT = path.resolve(__dirname, '../..')
export const SHOTS = path.join(ROOT, 'test/e2e/__screenshots__')

/** The Chromium the e2e tests drive (test/helpers/chromium.ts: the headless shell when installed), or null. */
export const chromiumPath = findChromium

export function rendererBuilt(): boolean {
  return fs.existsSync(path.join(ROOT, 'out/renderer/index.html'))
}

/**
 * What the tests touch of a DOM element inside `evaluate`/`evaluateAll` callbacks. Those run in the page, but
 * test/ is compiled with Node's libs only (no DOM types), so Playwright's `Element` is unresolved here: annotate
 * the callback's parameter with this instead of letting it be `any`.
 */
export interface PageElement {
  getAttribute(name: string): string | null
  scrollIntoView(options?: { block?: 'start' | 'center' | 'end' | 'nearest' }): void
}

/** The page's globals a test reaches for inside `page.evaluate` (see PageElement for why they are declared here). */
export interface PageGlobals {
  document: { createElement(tag: string): { textContent: string | null }; body: { appendChild(node: unknown): unknown } }
  [name: string]: unknown
}

export { serve, type Served }

export interface Browser {
  context: BrowserContext
  page: Page
  close(): Promise<void>
}

/**
 * One Chromium per vitest worker, launched on the worker's first openBrowser() and kept for every file the worker
 * runs after it (the e2e projects run without isolation: a worker runs file after file with its modules loaded
 * once, this one included); Playwright closes it when the worker ends. Each openBrowser() gets a fresh, isolated
 * context (its own cookies, storage and cache), which is what the tests rely on, closed when its test ends. A
 * browser that went away (crashed) is launched again for the next test instead of failing every file after it.
 * Why not one Chromium for the run, shared over Playwright's server: that server relays every protocol message
 * a second time, in vitest's main process (docs/internals/testing.md has the CPU measured).
 */
let shared: Promise<PlaywrightBrowser> | null = null
function workerChromium(): Promise<PlaywrightBrowser> {
  const exe = chromiumPath()
  if (!exe) return Promise.reject(new Error('Chromium not found (apt-get install -y chromium)'))
  if (!shared) {
    const mine = chromium.launch({ executablePath: exe, headless: true, args: CHROMIUM_ARGS })
    shared = mine
    const forget = () => {
      if (shared === mine) shared = null
    }
    mine.then((b) => b.on('disconnected', forget), forget)
  }
  return shared
}

export async function openBrowser(url: string, opts: { dark?: boolean; width?: number; height?: number } = {}): Promise<Browser> {
  const context = await (
    await workerChromium()
  ).newContext({
    viewport: { width: opts.width ?? 1440, height: opts.height ?? 900 },
    colorScheme: opts.dark ? 'dark' : 'light',
  })
  // Closed when the test ends even if it failed before its own close(): the worker runs more files after it.
  onTestFinished(() => context.close())
  const page = await context.newPage()
  const errors: string[] = []
  page.on('pageerror', (e) => errors.push(String(e)))
  await page.goto(url)
  return {
    context,
    page,
    async close() {
      await context.close()
      if (errors.length) throw new Error(`Page errors:\n${errors.join('\n')}`)
    },
  }
}

/** One DevTools session per page for its screenshots (shot). */
const shotSessions = new WeakMap<Page, Promise<CDPSession>>()

/**
 * The page as shown (the viewport) saved as test/e2e/__screenshots__/NAME.png, for people to look at. Taken with
 * the DevTools protocol's `optimizeForSpeed` PNG encoding (a faster zlib setting: same pixels, ~20 % larger
 * files) instead of Playwright's `page.screenshot`: measured 0.05 s of Chromium CPU per screenshot against 0.14 s
 * (docs/internals/testing.md, "Where the e2e CPU goes"). No assertion reads these files.
 */
export async function shot(page: Page, name: string): Promise<string> {
  fs.mkdirSync(SHOTS, { recursive: true })
  const p = path.join(SHOTS, `${name}.png`)
  let session = shotSessions.get(page)
  if (!session) shotSessions.set(page, (session = page.context().newCDPSession(page)))
  const { data } = await (await session).send('Page.captureScreenshot', { format: 'png', optimizeForSpeed: true })
  fs.writeFileSync(p, Buffer.from(data, 'base64'))
  return p
}

/**
 * Browser mode on a DB made for one test file: before all, `make(dir)` writes the
 * DB in a temp folder, its bytes are hashed and `serve` starts; after all, both go.
 * Read `f.db`, `f.srv`, `f.before` (sha256), `f.dir` inside the tests.
 */
export function servedDb(make: (dir: string) => string | Promise<string>, env?: () => Record<string, string>) {
  const f = {} as { db: string; srv: Served; before: string; dir: string }
  let t: ReturnType<typeof tmpDir> | null = null
  beforeAll(async () => {
    t = tmpDir()
    f.dir = t.dir
    f.db = await make(t.dir)
    f.before = sha256File(f.db)
    f.srv = await serve(['--db', f.db], env?.())
  })
  afterAll(async () => {
    await f.srv?.stop()
    t?.cleanup()
  })
  return f
}

/**
 * Blocks until globalSetup's child has written every demo DB (its `ready` file; generateDemos.ts), or throws its
 * error. It is done long before the e2e files run (they are the last group), so this rarely waits.
 */
function waitForDemos(demos: string): void {
  const tick = new Int32Array(new SharedArrayBuffer(4))
  const until = Date.now() + 180_000
  while (!fs.existsSync(path.join(demos, DEMOS_READY))) {
    const failed = path.join(demos, DEMOS_FAILED)
    if (fs.existsSync(failed)) throw new Error(`generating the e2e demo DBs failed: ${fs.readFileSync(failed, 'utf8')}`)
    if (Date.now() > until) throw new Error(`the e2e demo DBs are not ready after 180 s (${demos})`)
    Atomics.wait(tick, 0, 0, 50)
  }
}

/**
 * A copy, at `dir/demo.db`, of the demo DB of `memories` memories that globalSetup generated once for the
 * whole run (the same bytes generateDemo would write here); the test owns its copy and may hash it.
 */
export function demoCopy(dir: string, memories: (typeof DEMO_SIZES)[number]): string {
  const out = path.join(dir, 'demo.db')
  const demos = inject('e2eDemoDir')
  waitForDemos(demos)
  const src = path.join(demos, demoFileName(memories))
  fs.copyFileSync(src, out)
  // The demo's eval cases live in its workspace beside it (demo.db.recallscope): copy that too, or every
  // screen that reads cases (Evaluate, tune) sees none.
  if (fs.existsSync(`${src}.recallscope`)) fs.copyFileSync(`${src}.recallscope`, `${out}.recallscope`)
  return out
}

/** Copy link (top bar) → the clipboard's address (which must not carry the token). */
export async function copyLink(page: Page): Promise<string> {
  await page.getByRole('button', { name: 'Copy link' }).click()
  await expect.poll(() => page.getByRole('button', { name: 'Link copied' }).count()).toBe(1)
  const link = await page.evaluate<string>('navigator.clipboard.readText()')
  expect(link).not.toMatch(/token=/)
  return link
}

/** Copy link (top bar) → the clipboard's address, opened in a new tab of the same browser. */
export async function copyAndOpen(page: Page, context: BrowserContext, width: number): Promise<{ tab: Page; link: string }> {
  const link = await copyLink(page)
  const tab = await context.newPage()
  await tab.setViewportSize({ width, height: 900 })
  await tab.goto(link)
  return { tab, link }
}

/**
 * A copied link opened in THIS tab as a new tab of the same browser would open it: a new document (not a hash change)
 * with the tab's sessionStorage empty. What a new tab lacks and this one has is sessionStorage and the page's memory;
 * localStorage and the HTTP cache belong to the browser context, shared by its tabs either way. The storage is cleared
 * on a same-origin document that runs no script (the app's stylesheet), after the app's own pagehide handler has
 * written to it. A real new tab costs a renderer process and a first load more (~0.4 s of Chromium): the files that
 * check many copied links open one in a real tab (copyAndOpen) and the rest here (docs/internals/testing.md, "stop 33").
 */
export async function reopenAsNewTab(page: Page, link: string): Promise<void> {
  const css = await page.evaluate<string>(`document.querySelector('link[rel="stylesheet"]').href`)
  await page.goto(css)
  await page.evaluate('sessionStorage.clear()')
  expect(await page.evaluate<number>('sessionStorage.length')).toBe(0)
  await page.goto(link)
}

/**
 * The embedding map: wait until its points layer shows the layout on screen now: the canvas is drawn at its container's laid-out size
 * (the first draw is at a default 600×400, redrawn when the ResizeObserver reports the stage's size, which can come
 * after the status line under load), then two frames, so the draw effect of the last commit (a new layout) has run.
 * A pixel read before that can belong to a picture that moves before the mouse gets there.
 */
export async function waitForDrawnLayout(page: Page): Promise<void> {
  await expect
    .poll(
      () =>
        page.evaluate(() => {
          const g = globalThis as unknown as PageGlobals & {
            document: {
              querySelector(s: string): {
                width: number
                height: number
                style: { width: string; height: string }
                parentElement: { getBoundingClientRect(): { width: number; height: number } }
              } | null
            }
            devicePixelRatio: number
          }
          const c = g.document.querySelector('canvas[data-testid="map-points"]')
          if (!c) return false
          const r = c.parentElement.getBoundingClientRect()
          const [w, h] = [Math.max(200, Math.floor(r.width)), Math.max(200, Math.floor(r.height))]
          const dpr = g.devicePixelRatio || 1
          return c.style.width === `${w}px` && c.style.height === `${h}px` && c.width === w * dpr && c.height === h * dpr
        }),
      { timeout: 30_000 },
    )
    .toBe(true)
  await page.evaluate(
    () =>
      new Promise<void>((done) => {
        const g = globalThis as unknown as { requestAnimationFrame(f: () => void): void }
        g.requestAnimationFrame(() => g.requestAnimationFrame(() => done()))
      }),
  )
}
