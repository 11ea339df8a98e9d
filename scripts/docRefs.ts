/**
 * References in code comments resolve inside the repository (docs/internals/style.md "References in comments"):
 *  - `docs/…/page.md "Heading"`  a file under docs/ and, when quoted, one of its headings;
 *  - `seed 003`, `seeds 002, 004`  a row of docs/internals/recall-systems/README.md, whose page exists;
 *  - `issue 13`                    an entry marked `(issue 13` in CHANGELOG.md.
 *
 * `npx tsx scripts/docRefs.ts --write` rewrites the older forms mechanically (the design and style documents
 * and the seed files used to live outside the repo) and then lists what still does not resolve; run it again
 * after merging work that added comments. test/docs.test.ts runs `findBrokenRefs` in `npm test`.
 */
import fs from 'node:fs'
import path from 'node:path'

const ROOT = path.resolve(__dirname, '..')
/** Where comments are read: the code, the tests, the benches and the scripts. */
const SCAN_DIRS = ['src', 'test', 'bench', 'scripts']
/** Files that quote the old forms on purpose (this one, and the test that runs it). */
const SELF = new Set(['scripts/docRefs.ts', 'test/docs.test.ts'])

/** The old form → the page in this repo. Applied in order; each is idempotent (a rewritten path no longer matches). */
const REWRITES: [RegExp, string][] = [
  [/(?<![/\w])DESIGN\.md/g, 'docs/internals/design.md'],
  [/(?<![/\w])STYLE\.md/g, 'docs/internals/style.md'],
  [/\.\.\/shared\/seeds\/00N_\*\.txt/g, 'docs/internals/recall-systems/README.md'],
  [/\.\.\/shared\/seeds\/?/g, 'docs/internals/recall-systems/'],
  [/(?<![/\w])reference\/engram-format\.md/g, 'docs/internals/recall-systems/engram.md'],
]

/** Every source file the check reads, relative to the repo root. */
export function listSourceFiles(): string[] {
  const out: string[] = []
  for (const dir of SCAN_DIRS) {
    for (const f of fs.readdirSync(path.join(ROOT, dir), { recursive: true })) {
      const rel = `${dir}/${String(f).split(path.sep).join('/')}`
      if (/\.(ts|tsx|cjs|mjs|js)$/.test(rel) && !SELF.has(rel)) out.push(rel)
    }
  }
  return out.sort()
}

/** The text with every old-form reference rewritten to its page in docs/. */
export function rewriteRefs(text: string): string {
  return REWRITES.reduce((t, [re, to]) => t.replace(re, to), text)
}

/** Headings of a Markdown file, lower-cased, without the leading #s. */
function headingsOf(file: string): string[] {
  return [...fs.readFileSync(file, 'utf8').matchAll(/^#+\s+(.+)$/gm)].map((m) => m[1].trim().toLowerCase())
}

/** Seed numbers the recall-systems index maps to an existing page. */
function seedPages(): Map<number, string> {
  const index = path.join(ROOT, 'docs/internals/recall-systems/README.md')
  const map = new Map<number, string>()
  if (!fs.existsSync(index)) return map
  for (const m of fs.readFileSync(index, 'utf8').matchAll(/^\|\s*(\d{3})\s*\|.*\]\(([^)]+)\)\s*\|$/gm)) {
    if (fs.existsSync(path.join(path.dirname(index), m[2]))) map.set(Number(m[1]), m[2])
  }
  return map
}

/** `file:line: what` for every reference in a comment that does not resolve inside the repo (files relative to the root, or absolute). */
export function findBrokenRefs(files: string[] = listSourceFiles()): string[] {
  const seeds = seedPages()
  const changelog = fs.readFileSync(path.join(ROOT, 'CHANGELOG.md'), 'utf8')
  const broken: string[] = []
  for (const rel of files) {
    const lines = fs.readFileSync(path.resolve(ROOT, rel), 'utf8').split('\n')
    lines.forEach((line, i) => {
      const at = `${rel}:${i + 1}`
      if (rewriteRefs(line) !== line) broken.push(`${at}: a reference outside the repo (run npx tsx scripts/docRefs.ts --write)`)
      for (const m of line.matchAll(/\b(docs\/[\w./-]+\.md)(?:\s*"([^"]+)")?/g)) {
        const file = path.join(ROOT, m[1])
        if (!fs.existsSync(file)) broken.push(`${at}: ${m[1]} does not exist`)
        else if (m[2] && !headingsOf(file).includes(m[2].toLowerCase())) broken.push(`${at}: ${m[1]} has no heading "${m[2]}"`)
      }
      for (const m of line.matchAll(/\bseeds?\s+((?:0\d\d)(?:(?:\s*(?:,|\/|and|or|&)\s*(?:seed\s+)?)0\d\d)*)/gi)) {
        for (const n of m[1].match(/\d{3}/g) ?? []) if (!seeds.has(Number(n))) broken.push(`${at}: seed ${n} maps to no page`)
      }
      for (const m of line.matchAll(/\bissues?\s+#?(\d+)/gi)) {
        if (!changelog.includes(`(issue ${m[1]}`)) broken.push(`${at}: issue ${m[1]} has no CHANGELOG.md entry`)
      }
    })
  }
  return broken
}

/** `--write`: rewrite the old forms in place, then print what still does not resolve. */
function runCli(argv: string[]): number {
  if (argv.includes('--write')) {
    let changed = 0
    for (const rel of listSourceFiles()) {
      const file = path.join(ROOT, rel)
      const text = fs.readFileSync(file, 'utf8')
      const next = rewriteRefs(text)
      if (next !== text) {
        fs.writeFileSync(file, next)
        changed++
      }
    }
    process.stdout.write(`rewrote references in ${changed} files\n`)
  }
  const broken = findBrokenRefs()
  for (const b of broken) process.stdout.write(`${b}\n`)
  process.stdout.write(`${broken.length} unresolved references\n`)
  return broken.length === 0 ? 0 : 1
}

if (require.main === module) process.exitCode = runCli(process.argv.slice(2))
