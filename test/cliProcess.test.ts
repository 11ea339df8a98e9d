/**
 * Issue 10, LOW 7/8: the real CLI process. Piped into `head -c 50` it exits quietly
 * (no unhandled EPIPE); SIGINT/SIGTERM during an import leave no temp file behind.
 */
import { spawn } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { tmpDir } from './helpers/tmp'
import { writeDemoDb } from './helpers/demoDb'

const BIN = path.resolve(__dirname, '../bin/recallscope.cjs')
let t: ReturnType<typeof tmpDir>
let db: string
let big: string

beforeAll(() => {
  t = tmpDir()
  db = writeDemoDb(path.join(t.dir, 'demo.db'), { memories: 300 }).path
  // ~60 MB of JSONL: long enough to be interrupted mid-import
  big = path.join(t.dir, 'big.jsonl')
  const fd = fs.openSync(big, 'w')
  const pad = 'x'.repeat(400)
  for (let chunk = 0; chunk < 30; chunk++) {
    const lines: string[] = []
    for (let i = 0; i < 5000; i++) {
      const n = chunk * 5000 + i
      lines.push(JSON.stringify({ id: `m${n}`, content: `memory ${n} about deploys ${pad}`, tier: 'working', sessionId: `s${n % 97}` }))
    }
    fs.writeSync(fd, `${lines.join('\n')}\n`)
  }
  fs.closeSync(fd)
})
afterAll(() => t.cleanup())

describe('the CLI process', () => {
  it('piped into `head -c 50`: exits quietly, no EPIPE', async () => {
    const child = spawn(process.execPath, [BIN, 'recall', '--db', db, '--query', 'deploy', '--json', '--set', 'topK=200', '--set', 'floor=0'], {
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    let err = ''
    child.stderr.on('data', (d) => (err += d))
    // What `head -c 50` does once it has its 50 bytes: close the pipe. Closing it before the
    // first write makes the EPIPE certain instead of a race with the pipe buffer.
    child.stdout.destroy()
    const code = await new Promise<number | null>((r) => child.on('close', (c) => r(c)))
    expect(err).not.toMatch(/EPIPE|Unhandled/)
    expect(code).toBe(0)
  })

  for (const sig of ['SIGINT', 'SIGTERM'] as const) {
    it(`${sig} during import: exit ${sig === 'SIGINT' ? 130 : 143}, no out.tmp-* or -journal left`, async () => {
      const outDir = path.join(t.dir, `out-${sig}`)
      fs.mkdirSync(outDir)
      const out = path.join(outDir, 'imported.db')
      const child = spawn(process.execPath, [BIN, 'import', 'jsonl', '--in', big, '--out', out, '--embed', 'hashing'], { stdio: ['ignore', 'pipe', 'pipe'] })
      let err = ''
      child.stderr.on('data', (d) => (err += d))
      const closed = new Promise<number | null>((r) => child.on('close', (c, s) => r(c ?? (s ? -1 : null))))
      // wait until the temp output exists, i.e. the import is under way
      const t0 = Date.now()
      while (!fs.readdirSync(outDir).some((f) => f.includes('.tmp-')) && Date.now() - t0 < 20_000) await new Promise((r) => setTimeout(r, 20))
      expect(
        fs.readdirSync(outDir).some((f) => f.includes('.tmp-')),
        err,
      ).toBe(true)
      await new Promise((r) => setTimeout(r, 150))
      child.kill(sig)
      const code = await closed
      expect(code, err).toBe(sig === 'SIGINT' ? 130 : 143)
      expect(fs.readdirSync(outDir)).toEqual([])
    })
  }
})
