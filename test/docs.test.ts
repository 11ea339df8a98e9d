/**
 * docs/ stays true to the code: the generated reference (scripts/reference.ts) and bench table
 * (scripts/benchTable.ts) are current, every relative link in README.md and docs/ points at a file that
 * exists, and every reference in a code comment (a docs/ page and heading, a seed number, an issue
 * number) resolves inside the repo.
 */
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { loadSaved, PERFORMANCE_DOC, renderPerformanceDoc } from '../scripts/benchTable'
import { findBrokenRefs, rewriteRefs } from '../scripts/docRefs'
import { readChannels, renderReference } from '../scripts/reference'
import { contract } from '../src/shared/contract'

const ROOT = path.resolve(__dirname, '..')

describe('docs', () => {
  it('docs/reference is what `npm run docs` renders from the code now', () => {
    for (const [rel, content] of Object.entries(renderReference())) {
      const file = path.join(ROOT, rel)
      expect(fs.existsSync(file), `${rel} is missing: run npm run docs`).toBe(true)
      expect(fs.readFileSync(file, 'utf8'), `${rel} is stale: run npm run docs`).toBe(content)
    }
  })

  it('the bench results in docs/internals/performance.md are what `npm run bench:docs` renders from docs/internals/bench/*.json', async () => {
    const doc = fs.readFileSync(path.join(ROOT, PERFORMANCE_DOC), 'utf8')
    expect(doc, `${PERFORMANCE_DOC} is stale: run npm run bench:docs`).toBe(await renderPerformanceDoc(doc, loadSaved()))
  })

  it('the channel reference lists every channel of the contract, each with a description', () => {
    const read = readChannels()
    expect(read.map((c) => c.name).sort()).toEqual(Object.keys(contract).sort())
    for (const c of read) expect(c.doc, c.name).not.toBe('')
  })

  it('every relative link in README.md and docs/ resolves to a file', () => {
    const files = [
      path.join(ROOT, 'README.md'),
      ...fs.readdirSync(path.join(ROOT, 'docs'), { recursive: true }).map((f) => path.join(ROOT, 'docs', String(f))),
    ].filter((f) => f.endsWith('.md'))
    const broken: string[] = []
    for (const f of files) {
      const text = fs.readFileSync(f, 'utf8').replace(/```[\s\S]*?```/g, '')
      for (const m of text.matchAll(/\]\(([^)\s]+)\)/g)) {
        const target = m[1].split('#')[0]
        if (!target || /^[a-z]+:/i.test(target)) continue
        if (!fs.existsSync(path.resolve(path.dirname(f), target))) broken.push(`${path.relative(ROOT, f)} → ${m[1]}`)
      }
    }
    expect(broken).toEqual([])
  })

  it('every reference in a code comment resolves inside the repo (docs/internals/style.md "References in comments")', () => {
    expect(findBrokenRefs()).toEqual([])
  })

  it('the rewrite maps the old forms to pages in docs/ and leaves rewritten ones alone', () => {
    const old = '// DESIGN.md "Gates"; STYLE.md "Extension points"; ../shared/seeds/00N_*.txt; reference/engram-format.md'
    const once = rewriteRefs(old)
    expect(once).toBe(
      '// docs/internals/design.md "Gates"; docs/internals/style.md "Extension points"; docs/internals/recall-systems/README.md; docs/internals/recall-systems/engram.md',
    )
    expect(rewriteRefs(once)).toBe(once)
  })

  it('a reference that does not resolve is reported', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'docrefs-'))
    try {
      const file = path.join(dir, 'bad.ts')
      fs.writeFileSync(file, '// seed 009 · issue 9999 · docs/internals/design.md "No such heading" · docs/nowhere.md · DESIGN.md\n')
      const broken = findBrokenRefs([file]).map((b) => b.replace(`${file}:1: `, ''))
      expect(broken.sort()).toEqual(
        [
          'a reference outside the repo (run npx tsx scripts/docRefs.ts --write)',
          'docs/internals/design.md has no heading "No such heading"',
          'docs/nowhere.md does not exist',
          'issue 9999 has no CHANGELOG.md entry',
          'seed 009 maps to no page',
        ].sort(),
      )
    } finally {
      fs.rmSync(dir, { recursive: true, force: true })
    }
  })
})
