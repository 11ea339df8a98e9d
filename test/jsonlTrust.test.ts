/**
 * Issue 10, LOW 14: JSONL rows without `tier` are recallable (read as live), and invalid
 * UTF-8 in an import is reported with its line, not silently replaced.
 */
import fs from 'node:fs'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { main } from '../src/main/cli/index'
import { tmpDir } from './helpers/tmp'

let t: ReturnType<typeof tmpDir>
beforeAll(() => (t = tmpDir()))
afterAll(() => t.cleanup())

async function cli(...args: string[]) {
  let out = ''
  let err = ''
  const code = await main(args, { out: (s) => (out += `${s}\n`), err: (s) => (err += `${s}\n`) })
  return { code, out, err }
}

describe('JSONL trust', () => {
  it('rows without `tier` are in scope under the default preset', async () => {
    const input = path.join(t.dir, 'min.jsonl')
    // createdAt given: undated rows are a separate matter (the scope's `before: now` skips NULL created_at)
    const at = Date.parse('2026-01-01T00:00:00Z')
    fs.writeFileSync(
      input,
      `${JSON.stringify({ content: 'the staging deploy uses blue green switching', createdAt: at })}\n${JSON.stringify({ content: 'lunch is at noon', createdAt: at })}\n`,
    )
    const out = path.join(t.dir, 'min.db')
    const imp = await cli('import', 'jsonl', '--in', input, '--out', out, '--json')
    expect(imp.code, imp.err).toBe(0)
    const rep = JSON.parse(imp.out)
    expect(rep.notes.join(' ')).toMatch(/2 memories have no tier: imported as working/)
    const r = await cli('recall', '--db', out, '--query', 'staging deploy', '--json', '--now', '2026-06-01T00:00:00Z')
    expect(r.code, r.err).toBe(0)
    const trace = JSON.parse(r.out)
    expect(trace.counts.inScope).toBe(2) // 0 before issue 10: no preset's tiers matched a NULL tier
    const info = await cli('info', '--db', out)
    expect(info.out).toMatch(/tiers: working 2/)
  })

  it('invalid UTF-8 is reported with its line number', async () => {
    const input = path.join(t.dir, 'utf8.jsonl')
    const good = Buffer.from(`${JSON.stringify({ content: 'fine line', tier: 'working' })}\n`)
    const bad = Buffer.concat([Buffer.from('{"content": "bad '), Buffer.from([0xc3, 0x28, 0xff]), Buffer.from(' bytes", "tier": "working"}\n')])
    fs.writeFileSync(input, Buffer.concat([good, bad, good]))
    const out = path.join(t.dir, 'utf8.db')
    const r = await cli('import', 'jsonl', '--in', input, '--out', out, '--json')
    expect(r.code, r.err).toBe(0)
    const rep = JSON.parse(r.out)
    const issue = rep.issues.find((i: { reason: string }) => /invalid UTF-8/.test(i.reason))
    expect(issue).toMatchObject({ line: 2, action: 'repaired' })
    expect(rep.repaired).toBe(1)
  })
})
