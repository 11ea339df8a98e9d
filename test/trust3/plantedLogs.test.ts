/**
 * Trust round 3, planted files where recallscope reads logs and JSON it is pointed at
 * (docs/guide/safety.md): a FIFO (or a symlink to one) given as an OTLP trace log, a JSONL event
 * log, a `--config` JSON file or a Qdrant `meta.json` is refused with a
 * typed BAD_INPUT naming it and what it is, within seconds; before, a plain `open()` blocked
 * forever waiting for a writer (on the thread that answers the UI).
 */
import { execFileSync } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { readJsonFile } from '../../src/main/cli/args'
import { eventLogOf } from '../../src/main/events/eventLog'
import { readJsonLines } from '../../src/main/events/lineReader'
import { readTraceFile } from '../../src/main/events/otlp/traceFile'
import { openSource } from '../../src/main/store/registry'
import type { MemorySource } from '../../src/main/store/source'
import { RecallscopeError } from '../../src/shared/result'
import { tmpDir } from '../helpers/tmp'
import { writeDemoDb } from '../helpers/demoDb'

let t: ReturnType<typeof tmpDir>
let store: MemorySource
/** Each hostile read must end this soon (a blocked open never would). */
const DEADLINE_MS = 5000

beforeAll(() => {
  t = tmpDir()
  store = openSource({ path: writeDemoDb(path.join(t.dir, 'demo.db'), { memories: 100 }).path })
})
afterAll(() => {
  store.close()
  t.cleanup()
})

/** A FIFO at `name` in the temp folder, and a symlink to it beside (`link-<name>`). */
function plant(name: string): { fifo: string; link: string } {
  const fifo = path.join(t.dir, name)
  execFileSync('mkfifo', [fifo])
  const link = path.join(t.dir, `link-${name}`)
  fs.symlinkSync(fifo, link)
  return { fifo, link }
}

/** The typed error `fn` ends with, and how long it took. */
async function refusal(fn: () => unknown): Promise<{ code: string; message: string; ms: number }> {
  const t0 = performance.now()
  try {
    await fn()
  } catch (e) {
    expect(e).toBeInstanceOf(RecallscopeError)
    return { code: (e as RecallscopeError).code, message: (e as Error).message, ms: performance.now() - t0 }
  }
  return { code: 'no error', message: '', ms: performance.now() - t0 }
}

async function drain<T>(g: AsyncGenerator<T>): Promise<void> {
  for await (const _ of g) void _
}

describe('a FIFO planted where a log or JSON file is read', () => {
  it('an OTLP trace log (.json and .jsonl) added as a log: BAD_INPUT naming the FIFO, directly and through a symlink', async () => {
    for (const name of ['trace.json', 'trace.jsonl']) {
      const { fifo, link } = plant(name)
      for (const p of [fifo, link]) {
        const r = await refusal(() => eventLogOf(store).addLogFile(p))
        expect(r.code, p).toBe('BAD_INPUT')
        expect(r.message).toContain(p)
        expect(r.message).toMatch(/FIFO/)
        expect(r.ms).toBeLessThan(DEADLINE_MS)
        // the reader itself, given the path after a sniff (the file swapped for a FIFO in between)
        const direct = await refusal(() => drain(readTraceFile(p, { read: 0, skipped: 0, problems: [] })))
        expect(direct.code, `readTraceFile ${p}`).toBe('BAD_INPUT')
        expect(direct.ms).toBeLessThan(DEADLINE_MS)
      }
    }
  })

  it('a JSONL event log streamed line by line: BAD_INPUT, never waited on', async () => {
    const { fifo, link } = plant('events.jsonl')
    for (const p of [fifo, link]) {
      const r = await refusal(() => drain(readJsonLines(p)))
      expect(r.code, p).toBe('BAD_INPUT')
      expect(r.message).toContain(p)
      expect(r.ms).toBeLessThan(DEADLINE_MS)
    }
  })

  it('a JSON file named by a CLI flag: BAD_INPUT naming the flag and the FIFO', async () => {
    const { fifo, link } = plant('config.json')
    for (const p of [fifo, link]) {
      const r = await refusal(() => readJsonFile(p, '--config'))
      expect(r.code, p).toBe('BAD_INPUT')
      expect(r.message).toContain('--config')
      expect(r.ms).toBeLessThan(DEADLINE_MS)
    }
  })

  it("a FIFO as Qdrant local's meta.json: the folder is refused typed (not INTERNAL), within seconds", async () => {
    const dir = path.join(t.dir, 'qdrant')
    fs.mkdirSync(path.join(dir, 'collection', 'memories'), { recursive: true })
    execFileSync('mkfifo', [path.join(dir, 'meta.json')])
    const r = await refusal(() => openSource({ path: dir }).close())
    expect(r.code).not.toBe('INTERNAL')
    expect(r.code).not.toBe('no error')
    expect(r.ms).toBeLessThan(DEADLINE_MS)
  })
})
