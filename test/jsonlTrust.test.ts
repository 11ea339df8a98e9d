/**
 * Issue 10, LOW 14: JSONL rows without `tier` (or `createdAt`) are recallable, and invalid
 * UTF-8 in an import is reported with its line, not silently replaced.
 */
import fs from 'node:fs'
import path from 'node:path'
import Database from 'better-sqlite3'
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

  it('content-only lines (the README: only `content` is required) are recallable now, dated to the file’s last change', async () => {
    const input = path.join(t.dir, 'content-only.jsonl')
    fs.writeFileSync(
      input,
      `${JSON.stringify({ content: 'the staging deploy uses blue green switching' })}\n${JSON.stringify({ content: 'lunch is at noon' })}\n`,
    )
    const written = Date.parse('2026-03-01T08:00:00Z')
    fs.utimesSync(input, written / 1000, written / 1000)
    const out = path.join(t.dir, 'content-only.db')
    const imp = await cli('import', 'jsonl', '--in', input, '--out', out, '--json')
    expect(imp.code, imp.err).toBe(0)
    expect(JSON.parse(imp.out).notes.join(' ')).toContain('2 memories have no createdAt: dated 2026-03-01T08:00:00.000Z')
    const db = new Database(out, { readonly: true })
    const rows = db.prepare('SELECT created_at, metadata FROM memories').all() as { created_at: number; metadata: string }[]
    db.close()
    expect(rows.map((r) => r.created_at)).toEqual([written, written])
    for (const r of rows) expect(JSON.parse(r.metadata)._import.createdAt).toMatch(/^missing/)
    const scopeAt = async (now: string) => {
      const r = await cli('recall', '--db', out, '--query', 'staging deploy', '--json', '--now', now)
      expect(r.code, r.err).toBe(0)
      return (JSON.parse(r.out) as { counts: { inScope: number } }).counts.inScope
    }
    expect(await scopeAt('2026-06-01T00:00:00Z')).toBe(2) // 0 before: `before: now` skipped NULL created_at
    expect(await scopeAt('2026-02-01T00:00:00Z')).toBe(0) // before the file existed: not known yet
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
