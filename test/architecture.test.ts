/**
 * "SQL lives in one layer" (docs/internals/style.md, after Datasette's Database): every query
 * goes through src/main/store/, which owns the connection, the read-only /
 * write-mode guard, time limits and truncation. dependency-cruiser
 * (.dependency-cruiser.cjs) keeps the DB drivers inside the store, but it
 * cannot see SQL text: this test reads every TypeScript file under src/
 * outside the store and fails, naming file:line, on
 *  - a string or template literal that holds an SQL statement, and
 *  - a `.prepare(` / `.exec(` / `.pragma(` call (a driver method used outside
 *    the store; `.exec` on a RegExp is not one).
 * Tests (*.test.ts[x]) are exempt for the reason the driver rule exempts them:
 * proving the store left a DB untouched needs SQL of its own.
 *
 * The literals are found with the TypeScript parser, so comments and JSDoc
 * (which talk about SELECT and tables freely) never count.
 */
import fs from 'node:fs'
import path from 'node:path'
import ts from 'typescript'
import { describe, expect, it } from 'vitest'

const ROOT = path.resolve(__dirname, '..')
const STORE = 'src/main/store/'

/**
 * SQL statement shapes. The statement keyword must be upper case (the house
 * style writes SQL keywords in capitals, and prose like "Select a memory from
 * the list" or "update the set" must not trip this), and it must come with the
 * keyword that makes it a statement.
 */
const SQL_SHAPES: RegExp[] = [
  /\bSELECT\b[\s\S]*?\bFROM\b/,
  /\bSELECT\s+(?:\d|count\(|changes\(|last_insert_rowid\(|sqlite_version\()/i,
  /\bINSERT\s+(?:OR\s+\w+\s+)?INTO\b/,
  /\bREPLACE\s+INTO\b/,
  /\bUPDATE\s+[\w"`.[\]]+\s+SET\b/,
  /\bDELETE\s+FROM\b/,
  /\bCREATE\s+(?:TEMP(?:ORARY)?\s+|VIRTUAL\s+|UNIQUE\s+)*(?:TABLE|INDEX|VIEW|TRIGGER)\b/,
  /\b(?:DROP|ALTER)\s+(?:TABLE|INDEX|VIEW|TRIGGER)\b/,
  /\bPRAGMA\s+\w+/,
  /\b(?:ATTACH|DETACH)\s+(?:DATABASE\b|'|"|\?|\$|:|@)/,
  /\bWITH\s+(?:RECURSIVE\s+)?\w+\s+AS\s*\(\s*SELECT\b/,
]

/** better-sqlite3 / pg methods that run SQL; only the store may call them. */
const DRIVER_METHODS = new Set(['prepare', 'exec', 'pragma'])

export interface Finding {
  line: number
  kind: 'sql' | 'call'
  text: string
}

/** True when `text` reads as an SQL statement (see SQL_SHAPES). */
export function looksLikeSql(text: string): boolean {
  return SQL_SHAPES.some((re) => re.test(text))
}

/** The text of a literal; a template's `${…}` parts become `?`, as they would in the statement. */
function literalText(node: ts.Node): string | null {
  if (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node)) return node.text
  if (ts.isTemplateExpression(node)) return node.head.text + node.templateSpans.map((s) => `?${s.literal.text}`).join('')
  return null
}

/** Names the file binds to a regular expression (`const re = /…/` or `new RegExp(…)`), whose `.exec` is not SQL. */
function regexNames(sf: ts.SourceFile): Set<string> {
  const names = new Set<string>()
  const visit = (n: ts.Node): void => {
    if (ts.isVariableDeclaration(n) && ts.isIdentifier(n.name) && n.initializer && isRegex(n.initializer, names)) names.add(n.name.text)
    ts.forEachChild(n, visit)
  }
  visit(sf)
  return names
}

function isRegex(e: ts.Expression, names: Set<string>): boolean {
  while (ts.isParenthesizedExpression(e) || ts.isAsExpression(e)) e = e.expression
  if (e.kind === ts.SyntaxKind.RegularExpressionLiteral) return true
  if (ts.isNewExpression(e) && ts.isIdentifier(e.expression) && e.expression.text === 'RegExp') return true
  return ts.isIdentifier(e) && names.has(e.text)
}

/** Every SQL literal and driver call in one file's source text. */
export function scanSource(fileName: string, source: string): Finding[] {
  const sf = ts.createSourceFile(fileName, source, ts.ScriptTarget.Latest, true, fileName.endsWith('x') ? ts.ScriptKind.TSX : ts.ScriptKind.TS)
  const regexes = regexNames(sf)
  const out: Finding[] = []
  const lineOf = (n: ts.Node) => sf.getLineAndCharacterOfPosition(n.getStart(sf)).line + 1
  const visit = (n: ts.Node): void => {
    const text = literalText(n)
    if (text !== null) {
      if (looksLikeSql(text)) out.push({ line: lineOf(n), kind: 'sql', text: text.replace(/\s+/g, ' ').trim().slice(0, 80) })
      // A template's parts are not literals of their own: do not descend and report it twice.
      if (ts.isTemplateExpression(n)) n.templateSpans.forEach((s) => visit(s.expression))
      return
    }
    if (ts.isCallExpression(n) && ts.isPropertyAccessExpression(n.expression) && DRIVER_METHODS.has(n.expression.name.text)) {
      const method = n.expression.name.text
      if (!(method === 'exec' && isRegex(n.expression.expression, regexes))) out.push({ line: lineOf(n.expression.name), kind: 'call', text: `.${method}(` })
    }
    ts.forEachChild(n, visit)
  }
  visit(sf)
  return out
}

/** src/**\/*.ts(x) outside the store, tests excluded, as repo-relative paths. */
function filesToScan(): string[] {
  const out: string[] = []
  const walk = (dir: string): void => {
    for (const e of fs.readdirSync(path.join(ROOT, dir), { withFileTypes: true })) {
      const rel = `${dir}/${e.name}`
      if (e.isDirectory()) {
        if (`${rel}/` !== STORE) walk(rel)
      } else if (/\.tsx?$/.test(e.name) && !/\.test\.tsx?$/.test(e.name)) out.push(rel)
    }
  }
  walk('src')
  return out.sort()
}

describe('the SQL detector', () => {
  // The detector is checked on its own first: a scan that finds nothing proves nothing unless it can find something.
  it.each([
    'SELECT id, content FROM memories WHERE id = ?',
    'SELECT count(*) AS n, min(r.at) AS mn FROM (?) r ?',
    'SELECT 1',
    'INSERT INTO notes (owner_type, owner_id) VALUES (?, ?)',
    'INSERT OR REPLACE INTO embeddings VALUES (?)',
    'UPDATE eval_runs SET name = ? WHERE id = ?',
    'DELETE FROM eval_cases WHERE id = ?',
    'CREATE TABLE IF NOT EXISTS eval_runs (id TEXT PRIMARY KEY)',
    'CREATE VIRTUAL TABLE memories_fts USING fts5(content)',
    'CREATE UNIQUE INDEX ix ON t(a)',
    'DROP TABLE t',
    'PRAGMA journal_mode = WAL',
    'ATTACH DATABASE ? AS ws',
    "ATTACH 'file.db' AS ws",
    'WITH recent AS (SELECT id FROM memories) SELECT * FROM recent',
  ])('recognises %j', (sql) => expect(looksLikeSql(sql)).toBe(true))

  it.each([
    'Select a memory from the list',
    'Delete this case from the set?',
    'Update the preset and set the weights',
    'Create a table of results',
    'Insert into the context window',
    'Could not attach the file',
    'pragma',
    'SELECT',
    'Recall from memory: select which gates apply',
  ])('leaves prose alone: %j', (text) => expect(looksLikeSql(text)).toBe(false))

  it('finds SQL in string, template and nested template literals, with line numbers, and not in comments', () => {
    const src = [
      '// SELECT id FROM memories (a comment: ignored)',
      "const a = 'SELECT id FROM memories'",
      'const b = `DELETE FROM ${table} WHERE id = ?`',
      'const c = f(`x ${`PRAGMA user_version`} y`)',
      '/** INSERT INTO notes VALUES (1) */',
      "const d = 'Select what to recall from the list'",
    ].join('\n')
    expect(scanSource('x.ts', src).map((f) => [f.line, f.kind])).toEqual([
      [2, 'sql'],
      [3, 'sql'],
      [4, 'sql'],
    ])
  })

  it('finds driver calls but not RegExp#exec', () => {
    const src = [
      'db.prepare(sql).all()',
      'store.db.exec(script)',
      'ws.pragma(setting)',
      'const re = /a(b)/',
      'const m = re.exec(s)',
      'const n = /x/.exec(s)',
      "const o = new RegExp('y').exec(s)",
      'const p = (/z/ as RegExp).exec(s)',
    ].join('\n')
    expect(scanSource('x.ts', src).map((f) => `${f.line}:${f.text}`)).toEqual(['1:.prepare(', '2:.exec(', '3:.pragma('])
  })

  it('reads .tsx', () => {
    expect(scanSource('X.tsx', 'const x = <div title={`SELECT a FROM b`}>SELECT is a word</div>').map((f) => f.line)).toEqual([1])
  })
})

describe('SQL only in src/main/store/', () => {
  const files = filesToScan()

  it('scans the tree it means to (renderer, shared, main outside the store)', () => {
    expect(files.some((f) => f.startsWith('src/renderer/'))).toBe(true)
    expect(files.some((f) => f.startsWith('src/shared/'))).toBe(true)
    expect(files.some((f) => f.startsWith('src/main/') && !f.startsWith(STORE))).toBe(true)
    expect(files.some((f) => f.startsWith(STORE))).toBe(false)
  })

  it('no SQL statement and no .prepare/.exec/.pragma call outside the store', () => {
    const findings = files.flatMap((f) =>
      scanSource(f, fs.readFileSync(path.join(ROOT, f), 'utf8')).map(
        (x) => `${f}:${x.line}: ${x.kind === 'sql' ? `SQL ${JSON.stringify(x.text)}` : `driver call ${x.text}`}`,
      ),
    )
    // The message is the list itself, one file:line per line, so a failing run says exactly what to move into src/main/store/.
    expect(findings, `SQL belongs in src/main/store/ (the one layer that owns the connection and its guards):\n${findings.join('\n')}\n`).toEqual([])
  })
})
