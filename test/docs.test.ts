/**
 * docs/ stays true to the code: the generated reference (scripts/reference.ts) is current, and every
 * relative link in README.md and docs/ points at a file that exists.
 */
import fs from 'node:fs'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
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

  it('the channel reference lists every channel of the contract, each with a description', () => {
    const read = readChannels()
    expect(read.map((c) => c.name).sort()).toEqual(Object.keys(contract).sort())
    for (const c of read) expect(c.doc, c.name).not.toBe('')
  })

  it('every reference in code comments resolves inside the repo (docs pages, design.md sections, seeds, issues)', () => {
    const design = fs.readFileSync(path.join(ROOT, 'docs/internals/design.md'), 'utf8')
    const seeds = fs.readFileSync(path.join(ROOT, 'docs/internals/recall-systems/README.md'), 'utf8')
    const changelog = fs.readFileSync(path.join(ROOT, 'CHANGELOG.md'), 'utf8')
    const broken: string[] = []
    const walk = (dir: string): string[] =>
      fs
        .readdirSync(path.join(ROOT, dir), { withFileTypes: true })
        .flatMap((e) =>
          e.isDirectory()
            ? e.name === 'node_modules' || e.name === '__screenshots__'
              ? []
              : walk(path.join(dir, e.name))
            : /\.(ts|tsx|cjs|mjs)$/.test(e.name)
              ? [path.join(dir, e.name)]
              : [],
        )
    for (const f of ['src', 'test', 'bench', 'scripts'].flatMap(walk)) {
      if (f === path.join('test', 'docs.test.ts')) continue
      const text = fs.readFileSync(path.join(ROOT, f), 'utf8')
      for (const m of text.matchAll(/\bdocs\/[\w./-]+\.md/g)) if (!fs.existsSync(path.join(ROOT, m[0]))) broken.push(`${f}: ${m[0]}`)
      for (const m of text.matchAll(/docs\/internals\/design\.md "([^"]+)"/g)) if (!design.includes(m[1])) broken.push(`${f}: design.md has no "${m[1]}"`)
      for (const m of text.matchAll(/\bseeds? (\d{3})\b/g)) if (!new RegExp(`\\|\\s*${m[1]}\\s*\\|`).test(seeds)) broken.push(`${f}: seed ${m[1]} has no page`)
      for (const m of text.matchAll(/\b[Ii]ssue (\d+)\b/g)) if (!changelog.includes(`issue ${m[1]}`)) broken.push(`${f}: issue ${m[1]} is not in CHANGELOG.md`)
    }
    expect(broken).toEqual([])
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
})
