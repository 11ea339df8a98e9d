/**
 * The opt-in counterfactual through the real channel, job manager and job worker,
 * against a fake chat server on loopback (Ollama /api/chat and OpenAI-compatible
 * /v1/chat/completions): one baseline call plus one per left-out memory, what each
 * call sent, progress and cancel, and every failure as a typed error. The fake
 * echoes its context block, so what each answer must be is known here.
 */
import path from 'node:path'
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import type { JobProgress } from '../src/shared/jobs'
import type { CounterfactualReport } from '../src/shared/trace'
import type { RecallEvent } from '../src/shared/types'
import type { SettingsView } from '../src/shared/contract'
import { App } from '../src/main/api/app'
import { createHandlers } from '../src/main/api/handlers'
import { createDispatcher, type Dispatch } from '../src/main/api/register'
import { createChatModel } from '../src/main/chat/chat'
import { openSource } from '../src/main/store/registry'
import { closedPort, fakeChatAnswer, startFakeChat, type FakeChatSwitches, type FakeServer } from './helpers/fakeOllama'
import { sha256File, tmpDir } from './helpers/tmp'
import { writeDemoDb } from './helpers/demoDb'

let t: ReturnType<typeof tmpDir>
let srv: FakeServer<FakeChatSwitches>
let db: string
let before: string
let ev: RecallEvent
let contents: Map<string, string>
let app: App
let call: Dispatch

const ok = async <T>(channel: string, input: unknown): Promise<T> => {
  const r = await call(channel, input)
  if (!r.ok) throw new Error(`${channel}: ${r.error.code} ${r.error.message}`)
  return r.data as T
}
const waitJob = async (jobId: string): Promise<JobProgress<'counterfactual'>> => {
  for (let i = 0; i < 1500; i++) {
    const p = await ok<JobProgress<'counterfactual'>>('jobs.get', { jobId })
    if (p.state !== 'running') return p
    await new Promise((r) => setTimeout(r, 20))
  }
  throw new Error('job did not finish')
}

beforeAll(async () => {
  t = tmpDir()
  srv = await startFakeChat()
  db = writeDemoDb(path.join(t.dir, 'demo.db'), { memories: 400, cases: false }).path
  const s = openSource({ path: db, workspacePath: path.join(t.dir, 'probe.ws') })
  ev = s.eventsPage({ limit: 1000 }).rows.find((e) => e.preset === 'fieldguide' && e.results.length >= 3)!
  contents = new Map([...s.getMemories(ev.results.map((r) => r.id)).values()].map((m) => [m.id, m.content]))
  s.close()
  before = sha256File(db)
})
afterAll(async () => {
  app?.close()
  await srv.close()
  t.cleanup()
})
beforeEach(() => {
  app?.close()
  srv.set({ delayMs: 0, hangUp: false, fail500: null })
  srv.requests.length = 0
  app = new App({ dataDir: path.join(t.dir, `data-${Math.random().toString(36).slice(2)}`), mode: 'browser' })
  app.open(db)
  call = createDispatcher(createHandlers(app))
})

describe('trace.counterfactual', () => {
  it('is refused (BAD_INPUT) while no chat model is configured, and never calls a server', async () => {
    const r = await call('trace.counterfactual', { eventId: ev.id })
    expect(r.ok ? null : r.error.code).toBe('BAD_INPUT')
    expect(srv.requests).toHaveLength(0)
    const bad = await call('settings.set', { chatModel: 'llama3.2' })
    expect(bad.ok ? null : bad.error.code).toBe('BAD_INPUT')
    const none = await call('trace.counterfactual', { eventId: 'no-such-event' })
    expect(none.ok ? null : none.error.code).toBe('BAD_INPUT')
  })

  it('Ollama: a baseline and one call per memory, each sending the block without that memory; answers compared', async () => {
    const view = await ok<SettingsView>('settings.set', { chatModel: ' ollama:llama3.2 ', ollamaHost: srv.url })
    expect(view.chatModel).toBe('ollama:llama3.2')
    expect(view.chat).toEqual({ spec: 'ollama:llama3.2', host: srv.url })
    const missing = await call('trace.counterfactual', { eventId: 'no-such-event' })
    expect(missing.ok ? null : missing.error.code).toBe('NOT_FOUND')
    const seen: JobProgress[] = []
    const off = app.jobs.onProgress((p) => seen.push(p))
    const job = await ok<JobProgress>('trace.counterfactual', { eventId: ev.id })
    expect(job).toMatchObject({ kind: 'counterfactual', state: 'running' })
    const end = await waitJob(job.jobId)
    off()
    expect(end.state).toBe('done')
    const rep = end.result as CounterfactualReport
    const n = ev.results.length
    expect(rep.calls).toBe(n + 1)
    const chats = srv.requests.filter((r) => r.path === '/api/chat')
    expect(chats).toHaveLength(n + 1)
    for (const r of chats) {
      const b = r.body as { model: string; stream: boolean; options: { temperature: number; seed: number }; messages: { role: string; content: string }[] }
      expect(b).toMatchObject({ model: 'llama3.2', stream: false, options: { temperature: 0, seed: 1 } })
      expect(b.messages.find((m) => m.role === 'user')!.content).toBe(ev.query)
    }
    const systems = chats.map((r) => (r.body as { messages: { role: string; content: string }[] }).messages.find((m) => m.role === 'system')!.content)
    // baseline: every returned memory's text is in the block
    for (const id of ev.results.map((r) => r.id)) expect(systems[0]).toContain(contents.get(id)!)
    expect(systems[0].startsWith('You are the assistant')).toBe(true)
    expect(rep.baseline.text).toBe(fakeChatAnswer(systems[0], ev.query!))
    expect(rep.rows.map((r) => r.omitted)).toEqual(ev.results.map((r) => r.id))
    rep.rows.forEach((row, i) => {
      const sys = systems[i + 1]
      // fieldguide lines are `[provenance] content`: one line per memory (demo texts may contain each other)
      const lines = (s: string) =>
        s
          .split('\n')
          .filter((l) => l.startsWith('['))
          .map((l) => l.slice(l.indexOf('] ') + 2))
      const without = ev.results.map((r) => r.id).filter((x) => x !== row.omitted)
      expect(lines(sys).sort()).toEqual(without.map((x) => contents.get(x)!).sort())
      expect(row.text).toBe(fakeChatAnswer(sys, ev.query!))
      expect(row.context).toBe('rerendered')
      // the answer lost that memory's words: less than identical to the baseline, and the diff removed some
      expect(row.vsBaseline!).toBeLessThan(1)
      expect(row.diff!.removed).toBeGreaterThan(0)
      expect(row.vsOriginal).not.toBeNull()
    })
    // progress per call, up to 1 + N
    const mine = seen.filter((p) => p.jobId === job.jobId)
    expect(mine.at(-1)).toMatchObject({ state: 'done', done: n + 1, total: n + 1 })
    expect(sha256File(db)).toBe(before)
  })

  it('OpenAI-compatible: /v1/chat/completions with the same prompts', async () => {
    await ok('settings.set', { chatModel: 'openai:qwen2.5-7b-instruct', openaiBaseUrl: `${srv.url}/v1` })
    const end = await waitJob((await ok<JobProgress>('trace.counterfactual', { eventId: ev.id, maxMemories: 2 })).jobId)
    expect(end.state).toBe('done')
    const rep = end.result as CounterfactualReport
    expect(rep.calls).toBe(3)
    expect(rep.skipped).toEqual(ev.results.slice(2).map((r) => r.id))
    const chats = srv.requests.filter((r) => r.path === '/v1/chat/completions')
    expect(chats).toHaveLength(3)
    expect(chats[0].body).toMatchObject({ model: 'qwen2.5-7b-instruct', temperature: 0, seed: 1 })
    expect(rep.promptTokens).toBeGreaterThan(0)
  })

  it('unreachable, slow, missing model: the job fails with CHAT_UNAVAILABLE and a stable errorCode', async () => {
    const port = await closedPort()
    await ok('settings.set', { chatModel: 'ollama:llama3.2', ollamaHost: `http://127.0.0.1:${port}` })
    let end = await waitJob((await ok<JobProgress>('trace.counterfactual', { eventId: ev.id })).jobId)
    expect(end).toMatchObject({ state: 'failed', error: { code: 'CHAT_UNAVAILABLE' } })
    expect(end.error!.message).toMatch(/connection refused/)

    await ok('settings.set', { ollamaHost: srv.url })
    srv.set({ delayMs: 2000 })
    const t0 = performance.now()
    end = await waitJob((await ok<JobProgress>('trace.counterfactual', { eventId: ev.id, timeoutMs: 300 })).jobId)
    expect(end).toMatchObject({ state: 'failed', error: { code: 'CHAT_UNAVAILABLE' } })
    expect(end.error!.message).toMatch(/within 300 ms/)
    expect(performance.now() - t0).toBeLessThan(1900)
    srv.set({ delayMs: 0 })

    await ok('settings.set', { chatModel: 'ollama:not-pulled' })
    end = await waitJob((await ok<JobProgress>('trace.counterfactual', { eventId: ev.id })).jobId)
    expect(end).toMatchObject({ state: 'failed', error: { code: 'CHAT_UNAVAILABLE' } })

    // the client itself: the stable codes in `details`
    const c = (host: string, timeoutMs = 5000) => createChatModel('ollama:llama3.2', { ollamaHost: host, timeoutMs })
    const msg = [{ role: 'user' as const, content: 'hi' }]
    await expect(c(`http://127.0.0.1:${port}`).complete(msg)).rejects.toMatchObject({ code: 'CHAT_UNAVAILABLE', details: { errorCode: 'ECONNREFUSED' } })
    srv.set({ delayMs: 1000 })
    await expect(c(srv.url, 200).complete(msg)).rejects.toMatchObject({ code: 'CHAT_UNAVAILABLE', details: { errorCode: 'TIMEOUT' } })
    srv.set({ delayMs: 0 })
    await expect(createChatModel('ollama:gone', { ollamaHost: srv.url }).complete(msg)).rejects.toMatchObject({ details: { errorCode: 'MODEL_NOT_FOUND' } })
    srv.set({ fail500: 'boom' })
    await expect(c(srv.url).complete(msg)).rejects.toMatchObject({ details: { errorCode: 'HTTP_500' } })
    expect(sha256File(db)).toBe(before)
  })

  it('cancel stops between calls', async () => {
    await ok('settings.set', { chatModel: 'ollama:llama3.2', ollamaHost: srv.url })
    srv.set({ delayMs: 300 })
    const job = await ok<JobProgress>('trace.counterfactual', { eventId: ev.id })
    await new Promise((r) => setTimeout(r, 100))
    expect(await ok('jobs.cancel', { jobId: job.jobId })).toEqual({ cancelled: true })
    const end = await waitJob(job.jobId)
    expect(end.state).toBe('cancelled')
    expect(srv.requests.filter((r) => r.path === '/api/chat').length).toBeLessThan(ev.results.length + 1)
  })
})
