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
