/**
 * Importers end to end: the real LoCoMo dev file (skipped, with a message, when
 * ../shared is absent) and the `recallscope import` command.
 */
import fs from 'node:fs'
import path from 'node:path'
import Database from 'better-sqlite3'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { main } from '../src/main/cli/index'
import { IMPORTERS } from '../src/main/store/importers'
import { importLocomo } from '../src/main/store/importers/locomo'
import { openSource } from '../src/main/store/registry'

import { normalizeQuery, rankAll } from '../src/main/recall/dense'
import { hashEmbed } from '../src/main/embed/hashing'
import { createEngramFixture } from './helpers/engramFixture'
import { LOCOMO_DEV, requireSharedData } from './helpers/sharedData'
import { sha256File, tmpDir } from './helpers/tmp'

let t: ReturnType<typeof tmpDir>
beforeAll(() => (t = tmpDir()))
afterAll(() => t.cleanup())

// Quirk tests on generated files run regardless; only the real-file test needs ../shared.
const locomoDev = requireSharedData(LOCOMO_DEV, 'LoCoMo real-file import test (test/importers.test.ts)')
const haveLocomo = locomoDev !== null

describe('LoCoMo quirks on the real dev file (../shared/data/locomo/locomo-dev.json)', () => {
  it.skipIf(!haveLocomo)('imports 144 sessions, 2,760 turns and 999 QA items, every quirk reported, in under 10 s', async () => {
    type Conv = { sample_id: string; conversation: Record<string, unknown>; qa: { evidence: string[] }[] }
    const raw = JSON.parse(fs.readFileSync(locomoDev!, 'utf8')) as Conv[]
    // Independent counts from the raw JSON.
    const lists = raw.flatMap((c) => Object.entries(c.conversation).filter(([k, v]) => /^session_\d+$/.test(k) && Array.isArray(v)))
    const dateOnly = raw.flatMap((c) =>
      Object.keys(c.conversation)
        .map((k) => /^session_(\d+)_date_time$/.exec(k))
        .filter((m): m is RegExpExecArray => m !== null && !Array.isArray(c.conversation[`session_${m[1]}`])),
    )
    const emptyEvidence = raw.flatMap((c) => c.qa.map((q, i) => ({ id: `${c.sample_id}#${i}`, q }))).filter((x) => x.q.evidence.length === 0)

    const out = path.join(t.dir, 'locomo.db')
    const t0 = performance.now()
    const r = await importLocomo({ input: locomoDev!, output: out, now: Date.UTC(2025, 0, 1) })
    const ms = performance.now() - t0
    console.info(`[importers.test] LoCoMo dev import: ${Math.round(ms)} ms (${r.written.memories} turns, ${r.written.embeddings} hashing vectors)`)
    expect(ms).toBeLessThan(10_000)
    const count = (action: string, reason: string) => r.reasons.find((x) => x.action === action && x.reason === reason)?.count ?? 0

    // The data README's numbers: 144 sessions (every session_N a conversation declares), 2,760 turns, 999 QA items.
    expect(r.written.sessions + count('skipped', 'date without a session list')).toBe(144)
    expect(r.written.sessions).toBe(lists.length)
    expect(count('skipped', 'date without a session list')).toBe(dateOnly.length)
    expect(r.written.memories).toBe(2760)
    expect(r.written.evalCases).toBe(999)
    expect(r.written.embeddings).toBe(2760 + lists.length)

    // The malformed evidence ids of the README, each handled and reported where it occurs.
    const at = (reason: string) => r.issues.filter((i) => i.reason === reason).map((i) => i.evidence)
    expect(at('several evidence ids in one string (split)')).toEqual(['D8:6; D9:17'])
    expect(at('malformed evidence id (normalised)')).toEqual(['D:11:26'])
    expect(at('malformed evidence id')).toEqual(['D'])

    const s = openSource({ path: out })
    try {
      expect(s.facts().counts.evalCases).toBe(999)
      const cases = s.ws.prepare(`SELECT id, relevant, tags, split FROM eval_cases`).all() as { id: string; relevant: string; tags: string; split: string }[]
      const byId = new Map(cases.map((c) => [c.id, { ...c, relevant: JSON.parse(c.relevant) as { id: string }[], tags: JSON.parse(c.tags) as string[] }]))
      expect(byId.get('conv-26#37')!.relevant.map((x) => x.id)).toEqual(['conv-26:D8:6', 'conv-26:D9:17'])
      expect(byId.get('conv-43#18')!.relevant.map((x) => x.id)).toContain('conv-43:D11:26')
      // Cases without evidence are kept (LoCoMo scores them 1), with nothing relevant.
      for (const e of emptyEvidence) expect(byId.get(e.id)!.relevant).toEqual([])
      // Every relevant id is a stored turn.
      const allRelevant = [...new Set(cases.flatMap((c) => (JSON.parse(c.relevant) as { id: string }[]).map((x) => x.id)))]
      expect(s.getMemories(allRelevant).size).toBe(allRelevant.length)
      const adversarial = raw.reduce((n, c) => n + c.qa.filter((q) => (q as unknown as { category: number }).category === 5).length, 0)
      expect(cases.filter((c) => (JSON.parse(c.tags) as string[]).includes('adversarial')).length).toBe(adversarial)
      const train = cases.filter((c) => c.split === 'train').length
      expect(train / cases.length).toBeGreaterThan(0.45)
      expect(train / cases.length).toBeLessThan(0.55)
      // Dense recall works offline: a question finds its evidence turn among the closest hashing vectors.
      const idx = s.vectors('hashing-256')
      expect(idx.count).toBe(2760)
      const ranked = rankAll(idx, normalizeQuery(hashEmbed('When did Caroline go to the LGBTQ support group?'))!)(idx.count).rows
      const top = ranked
        .filter((row) => idx.ids[row].startsWith('conv-26:'))
        .slice(0, 5)
        .map((row) => idx.ids[row])
      expect(top).toContain('conv-26:D1:3')
    } finally {
      s.close()
    }
  })
})

describe('recallscope import (CLI)', () => {
  const run = async (...argv: string[]) => {
    const out: string[] = []
    const err: string[] = []
    const code = await main(argv, { out: (s) => out.push(s), err: (s) => err.push(s) })
    return { code, out: out.join('\n'), err: err.join('\n') }
  }

  it('lists every registered importer in its usage', async () => {
    const r = await run('import', '--help')
    expect(r.code).toBe(0)
    for (const imp of IMPORTERS) expect(r.out).toContain(imp.name)
  })

  it('imports Engram, prints the grouped skips, refuses to overwrite without --force', async () => {
    const f = createEngramFixture(path.join(t.dir, 'cli-engram.db'), 'v1.0')
    const out = path.join(t.dir, 'cli-out.db')
    const first = await run('import', 'engram', '--in', f.path, '--out', out)
    expect(first.code).toBe(0)
    expect(first.out).toContain(`memories ${f.rows.length}`)
    expect(first.out).toMatch(/skipped\s+\d+× vector of the wrong dimension/)
    expect(first.out).toMatch(/repaired\s+2× metadata is not valid JSON/)
    const hash = sha256File(out)
    const again = await run('import', 'engram', '--in', f.path, '--out', out, '--json')
    expect(again.code).toBe(2)
    expect(JSON.parse(again.out)).toMatchObject({ ok: false, error: { code: 'CONFLICT' } })
    expect(sha256File(out)).toBe(hash)
    const forced = await run('import', 'engram', '--in', f.path, '--out', out, '--force', '--json', '--embed', 'hashing', '--model', 'nomic-embed-text')
    expect(forced.code).toBe(0)
    const report = JSON.parse(forced.out) as { reasons: string[]; models: { model: string }[] }
    expect(report).toMatchObject({ ok: true, importer: 'engram', layout: 'engram-v1', written: { memories: f.rows.length } })
    expect(report.reasons.length).toBeGreaterThan(0)
    expect(report.models.map((m) => m.model).sort()).toEqual(['hashing-256', 'nomic-embed-text'])
  })

  it('usage errors exit 2 and leave nothing behind', async () => {
    const junk = path.join(t.dir, 'junk.json')
    fs.writeFileSync(junk, 'not json')
    const out = path.join(t.dir, 'junk.db')
    const r = await run('import', 'locomo', '--in', junk, '--out', out, '--json')
    expect(r.code).toBe(2)
    expect((JSON.parse(r.out) as { error: { code: string } }).error.code).toBe('BAD_INPUT')
    expect(fs.readdirSync(t.dir).filter((x) => x.startsWith('junk.db'))).toEqual([])
    expect((await run('import', 'parquet', '--in', junk, '--out', out)).code).toBe(2)
    expect((await run('import', 'locomo', '--in', junk)).code).toBe(2)
    expect((await run('import', 'locomo', '--in', junk, '--out', out, '--model', 'x')).code).toBe(2)
    expect((await run('import', 'jsonl', '--in', junk, '--out', out, '--embed', 'ollama')).code).toBe(2)
    const missing = await run('import', 'jsonl', '--in', path.join(t.dir, 'nope.jsonl'), '--out', out)
    expect(missing.code).toBe(2) // issue 10 exit-code rule: a missing file is bad input
    expect(missing.err).toContain('No such file')
  })

  it('imports JSONL from the command line', async () => {
    const p = path.join(t.dir, 'cli.jsonl')
    fs.writeFileSync(p, ['{"id": "x", "content": "hello", "createdAt": 1}', 'oops', ''].join('\n'))
    const out = path.join(t.dir, 'cli-jsonl.db')
    const r = await run('import', 'jsonl', '--in', p, '--out', out)
    expect(r.code).toBe(0)
    expect(r.out).toMatch(/skipped\s+1× bad JSON\s+\(e\.g\. line 2/)
    const d = new Database(out, { readonly: true })
    expect(d.prepare(`SELECT id FROM memories`).pluck().all()).toEqual(['x'])
    d.close()
  })
})
