/**
 * trace.addLog / list / remove: a log added is read into events.page, remembered in the
 * workspace (a new App on the same store re-reads it), forgotten on remove; the desktop app
 * takes only a path picked in its dialog (purpose logIn); bad paths are typed errors.
 */
import fs from 'node:fs'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { App } from '../../src/main/api/app'
import { createHandlers } from '../../src/main/api/handlers'
import { createDispatcher } from '../../src/main/api/register'
import type { TraceLogs } from '../../src/shared/contract'
import type { Page, RecallEvent } from '../../src/shared/types'
import { hexId, otlpPayload, otlpSpan } from '../helpers/otlpFixture'
import { tmpDir } from '../helpers/tmp'
import { writeDemoDb } from '../helpers/demoDb'

let t: ReturnType<typeof tmpDir>
let db: string
let logFile: string
const key = `otlp:${hexId(16)}:`

beforeAll(() => {
  t = tmpDir()
  db = writeDemoDb(path.join(t.dir, 'demo.db'), { memories: 50 }).path
  const traceId = key.split(':')[1]
  logFile = path.join(t.dir, 'agent.jsonl')
  fs.writeFileSync(
    logFile,
    JSON.stringify(
      otlpPayload('logged-agent', [
        otlpSpan({
          traceId,
          name: 'retrieval',
          start: Date.parse('2026-02-01T00:00:00Z'),
          end: Date.parse('2026-02-01T00:00:01Z'),
          attrs: { 'gen_ai.operation.name': 'retrieval', 'gen_ai.retrieval.query.text': 'unique-needle query', 'gen_ai.retrieval.documents': '[]' },
        }),
      ]),
    ) + '\n',
  )
})
afterAll(() => t.cleanup())

type R<T> = { ok: true; data: T } | { ok: false; error: { code: string; message: string } }

function appOn(mode: 'browser' | 'electron', pickFile?: () => Promise<string | null>) {
  const app = new App({ mode, dataDir: path.join(t.dir, 'home'), ...(pickFile ? { pickFile } : {}) })
  app.grants.grant(db, 'command line', 'read')
  app.open(db)
  const d = createDispatcher(createHandlers(app))
  return { app, call: <T>(ch: string, input: unknown) => d(ch, input) as Promise<R<T>> }
}

const needle = async (call: ReturnType<typeof appOn>['call']) => {
  const r = await call<Page<RecallEvent>>('events.page', { search: 'unique-needle' })
  return r.ok ? r.data.rows.map((e) => e.agentId) : r.error.code
}

describe('trace.logs.*', () => {
  it('add reads the log into events.page and remembers it; a new App re-reads it; remove forgets it', async () => {
    const a = appOn('browser')
    try {
      const added = await a.call<TraceLogs>('trace.addLog', { path: logFile })
      expect(added.ok && added.data.remembered).toEqual([logFile])
      expect(await needle(a.call)).toEqual(['logged-agent'])
      const list = await a.call<TraceLogs>('trace.logs', {})
      expect(list.ok && list.data.sources.find((s) => s.file === logFile)).toMatchObject({ kind: 'otlp', events: 1, stats: { read: 1, skipped: 0 } })
    } finally {
      a.app.close()
    }
    const b = appOn('browser')
    try {
      expect(await needle(b.call)).toEqual(['logged-agent'])
      const removed = await b.call<TraceLogs>('trace.removeLog', { path: logFile })
      expect(removed.ok && removed.data.remembered).toEqual([])
      expect(await needle(b.call)).toEqual([])
    } finally {
      b.app.close()
    }
  })

  it('typed errors: not a trace log, missing path, empty input', async () => {
    const a = appOn('browser')
    try {
      const notLog = await a.call('trace.addLog', { path: db })
      expect(!notLog.ok && notLog.error.code).toBe('BAD_INPUT')
      const missing = await a.call('trace.addLog', { path: path.join(t.dir, 'nope.jsonl') })
      expect(!missing.ok && missing.error.code).toBe('BAD_INPUT')
      const empty = await a.call('trace.addLog', {})
      expect(!empty.ok && empty.error.code).toBe('BAD_INPUT')
    } finally {
      a.app.close()
    }
  })

  it('desktop app: a typed path is FORBIDDEN; the one picked with purpose logIn is taken', async () => {
    const a = appOn('electron', () => Promise.resolve(logFile))
    try {
      const typed = await a.call('trace.addLog', { path: logFile })
      expect(!typed.ok && typed.error.code).toBe('FORBIDDEN')
      const picked = await a.call<{ supported: boolean; path: string | null }>('store.pick', { purpose: 'logIn' })
      expect(picked.ok && picked.data.path).toBe(logFile)
      const added = await a.call<TraceLogs>('trace.addLog', { path: logFile })
      expect(added.ok).toBe(true)
      await a.call('trace.removeLog', { path: logFile })
    } finally {
      a.app.close()
    }
  })
})
