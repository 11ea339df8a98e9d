/**
 * Live OTLP and trace logs in the browser: with the Decision trace open, an OTLP/HTTP JSON
 * post to `serve`'s /v1/traces shows on the timeline's log within a second (pushed on the
 * progress stream, no reload); "Add a trace log…" with a typed path (browser mode) adds a
 * trace file's recall to the log. Screenshots under test/e2e/__screenshots__/.
 */
import fs from 'node:fs'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { chromiumPath, openBrowser, rendererBuilt, serve, shot, type Served } from './harness'
import { writeDemoDb } from '../helpers/demoDb'
import { openSource } from '../../src/main/store/registry'
import { hexId, otlpPayload, otlpSpan } from '../helpers/otlpFixture'
import { sha256File, tmpDir } from '../helpers/tmp'

const ready = chromiumPath() && rendererBuilt()

describe.skipIf(!ready)('decision trace: live OTLP and trace logs (browser mode)', () => {
  let t: ReturnType<typeof tmpDir>
  let db: string
  let srv: Served
  let before: string
  let ids: string[]
  beforeAll(async () => {
    t = tmpDir()
    db = path.join(t.dir, 'demo.db')
    writeDemoDb(db, { memories: 300 })
    const s = openSource({ path: db, workspacePath: path.join(t.dir, 'probe.ws') })
    ids = s.memoriesPage({ limit: 3 }).rows.map((m) => m.id)
    s.close()
    before = sha256File(db)
    srv = await serve(['--db', db])
  })
  afterAll(async () => {
    await srv?.stop()
    t?.cleanup()
  })

  const retrieval = (query: string, at: number) => {
    const trace = hexId(16)
    return otlpPayload('live-e2e-agent', [
      otlpSpan({
        traceId: trace,
        name: 'retrieval',
        start: at,
        end: at + 30,
        attrs: {
          'gen_ai.operation.name': 'retrieval',
          'gen_ai.retrieval.query.text': query,
          'gen_ai.retrieval.documents': JSON.stringify(ids.map((id, i) => ({ id, score: 0.9 - i / 10 }))),
        },
      }),
      otlpSpan({
        traceId: trace,
        name: 'chat',
        start: at + 40,
        end: at + 300,
        attrs: { 'gen_ai.operation.name': 'chat', 'gen_ai.completion.0.content': 'On it.' },
      }),
    ])
  }

  it('a live post appears in the log within a second; a trace log added by path appears too', async () => {
    const b = await openBrowser(srv.url)
    const { page } = b
    try {
      await page.getByRole('link', { name: 'Decision trace' }).click()
      const log = page.getByRole('listbox', { name: 'Events' })
      await log.getByRole('option').first().waitFor()
      const live = log.getByRole('option').filter({ hasText: 'live probe: where is the launch plan' })
      expect(await live.count()).toBe(0)
      // newest first: a recall at "now" heads the log
      const t0 = Date.now()
      const r = await fetch(`http://127.0.0.1:${srv.port}/v1/traces`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${srv.token}` },
        body: JSON.stringify(retrieval('live probe: where is the launch plan', Date.now() + 60_000)),
      })
      expect(r.status).toBe(200)
      await live.first().waitFor({ timeout: 5000 })
      const took = Date.now() - t0
      expect(took).toBeLessThan(1000)
      await shot(page, 'trace-live-otlp')
      await live.first().click()
      await page.getByRole('main', { name: 'Event' }).getByText('live probe: where is the launch plan').first().waitFor()
      await shot(page, 'trace-live-otlp-event')

      // "Add a trace log…" in browser mode: a path field
      const file = path.join(t.dir, 'agent-traces.jsonl')
      fs.writeFileSync(file, JSON.stringify(retrieval('from a trace file: museum route', Date.now() + 120_000)) + '\n')
      await page.locator('.tr-sources summary').click()
      await page.getByLabel('Trace log path').fill(file)
      await page.getByRole('button', { name: 'Add a trace log…' }).click()
      await log.getByRole('option').filter({ hasText: 'from a trace file: museum route' }).first().waitFor({ timeout: 5000 })
      await page.getByText('Live OTLP:').first().waitFor()
      await shot(page, 'trace-add-log')
      console.log(`live OTLP post → shown in the log: ${took} ms`)
    } finally {
      await b.close()
    }
    expect(sha256File(db)).toBe(before)
  })
})
