/**
 * `npm run lint` is two tools (docs/internals/testing.md, "Lint"): oxlint with tsgolint runs eslint:recommended,
 * typescript-eslint's recommendedTypeChecked and the house rules (.oxlintrc.json); ESLint runs the React hooks and
 * React Compiler rules on the renderer (eslint.config.mjs). A rule that silently drops out of either (a preset that
 * grows on an upgrade, an override glob that stops matching, a rule renamed) would pass a clean tree unnoticed, so:
 *
 *  - every rule the presets turn on is on in one of the two configs, but the named exceptions (each with its reason);
 *  - one violation per rule family is planted in a scratch tree that mirrors the repo's folders and carries the
 *    repo's two config files verbatim, and each tool must report exactly the expected (file, rule) pairs: the typed
 *    rules fire in source and test files, the any-flow rules and the vitest ban only where they apply, the React
 *    rules only on the renderer.
 */
import fs from 'node:fs'
import path from 'node:path'
import { spawnSync } from 'node:child_process'
import js from '@eslint/js'
import tseslint from 'typescript-eslint'
import reactHooks from 'eslint-plugin-react-hooks'
import { ESLint, type Linter } from 'eslint'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { readJsonc } from './helpers/jsonc'
import { tmpDir } from './helpers/tmp'

const ROOT = path.resolve(__dirname, '..')

/** .oxlintrc.json's rules and overrides (a JSONC file). */
function readOxlintConfig(file: string): { rules: Record<string, unknown>; overrides: { files: string[]; rules: Record<string, unknown> }[] } {
  return readJsonc(file) as ReturnType<typeof readOxlintConfig>
}

function isOn(v: unknown): boolean {
  const s = Array.isArray(v) ? (v[0] as unknown) : v
  return s !== 'off' && s !== 0
}

/** Rules a list of config blocks turns on in at least one block (each block may apply to some files only). */
function rulesOn(configs: Linter.Config[]): Set<string> {
  return new Set(
    configs.flatMap((c) =>
      Object.entries(c.rules ?? {})
        .filter(([, v]) => isOn(v))
        .map(([k]) => k),
    ),
  )
}

/** oxlint's name for an ESLint rule: the typescript-eslint extension rules are oxlint's eslint rules (they read TypeScript). */
function oxlintName(rule: string): string {
  const extension = ['no-array-constructor', 'no-unused-vars', 'no-unused-expressions']
  const bare = rule.replace('@typescript-eslint/', '')
  return rule.startsWith('@typescript-eslint/') && !extension.includes(bare) ? `typescript/${bare}` : bare
}

/**
 * Rules of the presets that neither config turns on, and why (each checked against the tree when the split was made).
 */
const NOT_RUN: Record<string, string> = {
  // Prettier owns line breaks (eslint-config-prettier turns it off for the same reason).
  'no-unexpected-multiline': 'formatting',
  // `async` without `await` implements a Promise-returning interface here; a forgotten await is caught at the call
  // site by no-floating-promises and no-misused-promises.
  '@typescript-eslint/require-await': 'off on purpose',
  // Report a bad React Compiler configuration or a dynamic-gating directive: with the plugin's defaults (no
  // `sources`, `dynamicGating: null`) neither can fire on any code; running them would run the compiler again.
  'react-hooks/config': 'needs compiler options',
  'react-hooks/gating': 'needs compiler options',
}

describe('lint configuration covers the presets', () => {
  it('turns on every rule of eslint:recommended, recommendedTypeChecked and react-hooks recommended-latest', async () => {
    const presets = rulesOn([js.configs.recommended, ...(tseslint.configs.recommendedTypeChecked as Linter.Config[])])
    const ox = readOxlintConfig(path.join(ROOT, '.oxlintrc.json'))
    const oxOn = rulesOn([{ rules: ox.rules as Linter.RulesRecord }, ...ox.overrides.map((o) => ({ rules: o.rules as Linter.RulesRecord }))])
    const eslint = new ESLint({ cwd: ROOT })
    const forRenderer = await eslint.calculateConfigForFile('src/renderer/src/app/App.tsx')
    const forScript = await eslint.calculateConfigForFile('scripts/check.cjs')
    const eslintOn = new Set([...rulesOn([forRenderer as Linter.Config]), ...rulesOn([forScript as Linter.Config])])

    const missing = [...presets].filter((r) => !NOT_RUN[r] && !oxOn.has(oxlintName(r)) && !eslintOn.has(r))
    expect(missing).toEqual([])
    const hooks = Object.keys(reactHooks.configs.flat['recommended-latest'].rules ?? {})
    expect(hooks.filter((r) => !NOT_RUN[r] && !eslintOn.has(r))).toEqual([])
    // The house rules.
    for (const r of ['max-lines', 'max-lines-per-function', 'no-restricted-imports', 'typescript/no-misused-promises']) expect(oxOn.has(r), r).toBe(true)
  })
})

/** The scratch tree: path → source. Each planted line says which rule it breaks. */
function plantedTree(): Record<string, string> {
  const typed = [
    "import { expect } from 'vitest' // no-restricted-imports (outside test files)",
    'async function work(): Promise<number> {',
    '  return 1',
    '}',
    'export function floating(): void {',
    '  work() // no-floating-promises',
    '}',
    'export function misused(): void {',
    '  ;[1, 2].forEach(async () => {',
    '    await work()',
    '  }) // no-misused-promises',
    '}',
    'export function unsafeAny(): number {',
    "  const n: number = JSON.parse('1') // no-unsafe-assignment (outside test files)",
    '  return n',
    '}',
    'export function template(o: { a: number }): string {',
    '  return `${o}` // restrict-template-expressions, no-base-to-string',
    '}',
    'export const typed: any = expect // no-explicit-any',
    'export function unused(): void {',
    '  let never = 1 // no-unused-vars, prefer-const',
    '}',
    'export function thrower(): void {',
    "  throw 'text' // only-throw-error",
    '}',
  ]
  const longFunction = ['export function long(): number {', '  let n = 0', ...Array.from({ length: 100 }, (_, i) => `  n += ${i}`), '  return n', '}']
  return {
    'tsconfig.json': JSON.stringify({
      compilerOptions: {
        strict: true,
        target: 'ES2022',
        module: 'ESNext',
        moduleResolution: 'Bundler',
        jsx: 'react-jsx',
        lib: ['ES2023', 'DOM'],
        types: [],
        noEmit: true,
      },
      include: ['src', 'test', 'bench'],
    }),
    'src/main/planted.ts': [...typed, ...longFunction].join('\n'),
    'test/planted.test.ts': [...typed, ...longFunction].join('\n'),
    'bench/planted.ts': "import { expect } from 'vitest'\nexport const e = expect\n",
    'test/helpers/assertions.ts': "import { expect } from 'vitest'\nexport const e = expect\n",
    'src/shared/long.ts': Array.from({ length: 501 }, (_, i) => `export const v${i} = ${i}`).join('\n'),
    'src/renderer/src/Planted.tsx': [
      "import { useEffect, useRef, useState } from 'react'",
      'export function Conditional({ on, items }: { on: boolean; items: string[] }) {',
      '  if (on) {',
      '    useState(0) // rules-of-hooks',
      '  }',
      '  const Inner = () => <span>{items.length}</span>',
      '  return <Inner /> // static-components',
      '}',
      'export function Impure() {',
      '  return <span>{performance.now()}</span> // purity',
      '}',
      'export function RefRead() {',
      '  const ref = useRef(0)',
      '  return <span>{ref.current}</span> // refs',
      '}',
      'export function EffectState({ id }: { id: string }) {',
      "  const [v, setV] = useState('')",
      '  useEffect(() => {',
      '    setV(id) // set-state-in-effect',
      '  }, []) // exhaustive-deps',
      '  return <span onClick={() => Promise.resolve(v)}>{v}</span>',
      '}',
      'export function load(): void {',
      '  fetch("/x") // no-floating-promises, on the renderer too',
      '}',
    ].join('\n'),
    'scripts/planted.cjs': "'use strict'\nconst path = require('node:path')\nmodule.exports = { p: path.join('a'), u: notDefinedAnywhere }\n",
    'scripts/sloppy.cjs': 'var a = 017\nfunction f(x, x) {\n  return x\n}\nmodule.exports = { a, f }\n',
  }
}

/** What each tool must report on the scratch tree: "file rule" per finding, sorted. */
const TYPED_EVERYWHERE = [
  'eslint(no-unused-vars)',
  'eslint(prefer-const)',
  'typescript(no-base-to-string)',
  'typescript(no-explicit-any)',
  'typescript(no-floating-promises)',
  'typescript(no-misused-promises)',
  'typescript(only-throw-error)',
  'typescript(restrict-template-expressions)',
]
const EXPECTED_OXLINT = [
  'bench/planted.ts eslint(no-restricted-imports)',
  'scripts/planted.cjs eslint(no-undef)',
  'scripts/sloppy.cjs eslint(no-redeclare)',
  'src/main/planted.ts eslint(max-lines-per-function)',
  'src/main/planted.ts eslint(no-restricted-imports)',
  'src/main/planted.ts typescript(no-unsafe-assignment)',
  ...TYPED_EVERYWHERE.map((r) => `src/main/planted.ts ${r}`),
  'src/renderer/src/Planted.tsx typescript(no-floating-promises)',
  'src/shared/long.ts eslint(max-lines)',
  ...TYPED_EVERYWHERE.map((r) => `test/planted.test.ts ${r}`),
].sort()
const EXPECTED_ESLINT = [
  'scripts/sloppy.cjs no-dupe-args',
  'scripts/sloppy.cjs no-octal',
  'src/renderer/src/Planted.tsx react-hooks/exhaustive-deps',
  'src/renderer/src/Planted.tsx react-hooks/purity',
  'src/renderer/src/Planted.tsx react-hooks/refs',
  'src/renderer/src/Planted.tsx react-hooks/rules-of-hooks',
  'src/renderer/src/Planted.tsx react-hooks/set-state-in-effect',
  'src/renderer/src/Planted.tsx react-hooks/static-components',
].sort()

describe('lint reports a planted violation of every rule family', () => {
  let dir = ''
  let cleanup = () => {}
  beforeAll(() => {
    ;({ dir, cleanup } = tmpDir('recallscope-lint-'))
    for (const f of ['.oxlintrc.json', 'eslint.config.mjs']) fs.copyFileSync(path.join(ROOT, f), path.join(dir, f))
    // The configs resolve their plugins (and tsgolint its binary) from here, as in the repo.
    fs.symlinkSync(path.join(ROOT, 'node_modules'), path.join(dir, 'node_modules'), 'junction')
    for (const [file, text] of Object.entries(plantedTree())) {
      fs.mkdirSync(path.dirname(path.join(dir, file)), { recursive: true })
      fs.writeFileSync(path.join(dir, file), text)
    }
  })
  afterAll(() => cleanup())

  function run(bin: string, args: string[]): string {
    const r = spawnSync(process.execPath, [path.join(ROOT, 'node_modules', bin), ...args], { cwd: dir, encoding: 'utf8', maxBuffer: 64 << 20 })
    expect(r.status, r.stderr).toBe(1) // findings, not a crash (2)
    return r.stdout
  }

  it('oxlint: the typed rules, the house rules and eslint:recommended, each where it applies', () => {
    const out = JSON.parse(run('oxlint/bin/oxlint', ['-f', 'json'])) as { diagnostics: { code: string; filename: string }[] }
    const found = [...new Set(out.diagnostics.map((d) => `${d.filename} ${d.code}`))].sort()
    expect(found).toEqual(EXPECTED_OXLINT)
  }, 180_000) // a few seconds idle; a tool start takes far longer on a loaded machine

  it('eslint: the React hooks and React Compiler rules on the renderer, and the sloppy-script rules', () => {
    const out = JSON.parse(run('eslint/bin/eslint.js', ['.', '-f', 'json', '--no-cache'])) as { filePath: string; messages: { ruleId: string | null }[] }[]
    const found = [...new Set(out.flatMap((f) => f.messages.map((m) => `${path.relative(dir, f.filePath)} ${m.ruleId}`)))].sort()
    expect(found).toEqual(EXPECTED_ESLINT)
  }, 180_000)
})
