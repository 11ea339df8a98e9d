/**
 * The decision, shown (issue 20 point 5), in a real browser on the demo DB: open
 * an event, read the agent's next message under the results, see which memory
 * it used (evidence attribution, shared words marked), then configure a chat
 * model in the page and run the counterfactual against a fake chat server this
 * test starts on loopback (serve reaches it through OLLAMA_HOST: no network).
 * Screenshots at 1440 px: test/e2e/__screenshots__/decision-*.png.
 */
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { chromiumPath, demoCopy, openBrowser, rendererBuilt, serve, shot, type PageElement, type Served } from './harness'
import { writeDemoDb } from '../helpers/demoDb'
import { openSource } from '../../src/main/store/registry'
import { termSet } from '../../src/shared/evidence'
import type { EventDecision } from '../../src/shared/types'
import { startFakeChat, type FakeChatSwitches, type FakeServer } from '../helpers/fakeOllama'
import { sha256File, tmpDir } from '../helpers/tmp'

const ready = chromiumPath() && rendererBuilt()
if (!ready) console.warn('e2e skipped: needs /usr/bin/chromium (apt-get install -y chromium) and a built renderer (npm run build)')

describe.skipIf(!ready)('decision trace: the decision, evidence and the counterfactual', () => {
  let t: ReturnType<typeof tmpDir>
  let db: string
  let srv: Served
  let chat: FakeServer<FakeChatSwitches>
  let before: string
  let eventId: string
  let decision: EventDecision
  let n: number
  let contents: Map<string, string>
  beforeAll(async () => {
    t = tmpDir()
    db = demoCopy(t.dir, 2000)
    const s = openSource({ path: db, workspacePath: path.join(t.dir, 'probe.ws') })
    const ev = s
      .eventsPage({ limit: 1000, agentId: 'agent-coder' })
      .rows.find((e) => e.preset === 'fieldguide' && e.results.length >= 4 && s.eventExtras(e.id).decision?.text?.includes('Also:'))!
    eventId = ev.id
    n = ev.results.length
    decision = s.eventExtras(ev.id).decision!
    contents = new Map([...s.getMemories(ev.results.map((r) => r.id)).values()].map((m) => [m.id, m.content]))
    s.close()
    before = sha256File(db)
    chat = await startFakeChat()
    srv = await serve(['--db', db], { OLLAMA_HOST: chat.url })
  })
  afterAll(async () => {
    await srv?.stop()
    await chat?.close()
    t?.cleanup()
  })

  it('event → decision → evidence → counterfactual; the DB bytes are unchanged', async () => {
    const b = await openBrowser(srv.url, { width: 1440, height: 900 })
    const { page } = b
    try {
      await page.getByRole('link', { name: 'Decision trace' }).click()
      const log = page.getByRole('listbox', { name: 'Events' })
      await log.getByRole('option').first().waitFor()
      await page.getByLabel('Agent').selectOption('agent-coder')
      const row = log.locator(`[data-id="${eventId}"]`)
      await row.scrollIntoViewIfNeeded()
      await row.click()
      const main = page.getByRole('main', { name: 'Event' })
      await main.getByText(eventId, { exact: true }).waitFor()
      // the decision: the agent's next message, with its time after the recall
      const dec = main.getByTestId('decision')
      await dec.waitFor()
      expect(await dec.textContent()).toBe(decision.text)
      expect(await main.getByTestId('decision-at').textContent()).toMatch(
        /^assistant message · \d{4}-\d\d-\d\d \d\d:\d\d UTC \(\+\d+\.\d s after the recall\)$/,
      )
      await main.getByRole('region', { name: 'Decision' }).evaluate((el: PageElement) => el.scrollIntoView({ block: 'center' }))
      await shot(page, 'decision-event')

      // evidence: every returned memory, the shared words marked; the hashing cosine is there
      const side = page.getByRole('complementary', { name: 'Explain' })
      await side.getByRole('tab', { name: 'Drivers' }).click()
      const ev = side.getByRole('table', { name: 'Evidence table' })
      await ev.locator('tbody tr').first().waitFor()
      expect(await ev.locator('tbody tr').count()).toBe(n)
      const dTerms = termSet(decision.text!)
      // the top row shares words with the decision, and exactly its marked words are decision words
      const top = ev.locator('tbody tr').first()
      const marked = await top.locator('mark').allTextContents()
      expect(marked.length).toBeGreaterThan(0)
      for (const w of marked) expect(dTerms.has([...termSet(w)][0])).toBe(true)
      const topId = (await top.getAttribute('data-id'))!
      for (const w of marked) expect(contents.get(topId)!.toLowerCase()).toContain(w.toLowerCase())
      expect(await top.locator('td').nth(3).textContent()).toMatch(/^-?\d\.\d\d$/)
      await shot(page, 'decision-evidence')

      // counterfactual: no chat model yet → set one in the page; then run it (1 + N calls to the fake server)
      const cf = side.getByRole('region', { name: 'Counterfactual' })
      await cf.getByLabel('Chat model').fill('ollama:llama3.2')
      await cf.getByRole('button', { name: 'Use this chat model' }).click()
      await cf.getByRole('button', { name: 'Counterfactual' }).click()
      const table = cf.getByRole('table', { name: 'Counterfactual table' })
      await table.waitFor({ timeout: 30_000 })
      expect(await table.locator('tbody tr').count()).toBe(n + 1)
      expect(chat.requests.filter((r) => r.path === '/api/chat')).toHaveLength(n + 1)
      // each leave-one-out answer differs from the full-context one: removed words, similarity < 1
      const changes = await table.locator('tbody tr td:nth-child(4)').allTextContents()
      expect(changes[0]).toBe('—')
      for (const c of changes.slice(1)) expect(c).toMatch(/^\+\d+ −[1-9]\d*$/)
      await table.locator('tbody tr').nth(1).click()
      await table.getByTestId('counterfactual-answer').locator('del').first().waitFor()
      await cf.evaluate((el: PageElement) => el.scrollIntoView({ block: 'start' }))
      await shot(page, 'decision-counterfactual')
    } finally {
      await b.close()
    }
    expect(sha256File(db)).toBe(before)
  })

  it('a store with no recall events: the empty log names where events come from', async () => {
    const empty = writeDemoDb(path.join(t.dir, 'empty.db'), { memories: 200, events: false, cases: false }).path
    const srv2 = await serve(['--db', empty])
    const b = await openBrowser(srv2.url, { width: 1440, height: 900 })
    try {
      await b.page.getByRole('link', { name: 'Decision trace' }).click()
      const log = b.page.getByRole('listbox', { name: 'Events' })
      const text = (await log.locator('.tr-empty').textContent()) ?? ''
      for (const source of [
        'Letta messages',
        'LangGraph checkpoints',
        'OpenAI Agents SDK sessions',
        'recall_events',
        '--log',
        'Claude Code transcripts',
        'OTLP',
        '/v1/traces',
      ])
        expect(text).toContain(source)
      expect(text).not.toContain('the agent writes one per recall')
      await shot(b.page, 'decision-empty-log')
    } finally {
      await b.close()
      await srv2.stop()
    }
  })
})
