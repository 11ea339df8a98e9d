/**
 * Eval cases in the workspace (`eval_cases`, `notes`): rows in and out. Parsing,
 * validation and the JSONL/LoCoMo formats live in eval/cases.ts.
 */
import type Database from 'better-sqlite3'
import type { CasesPage, EvalCaseRow } from '../../../shared/eval'
import { RecallscopeError } from '../../../shared/result'
import type { Cue } from '../../../shared/types'
import { runWriteTransaction } from '../sqlite/connection'

export interface CaseRowDb {
  id: string
  name: string
  query: string
  cue: string | null
  scope: string | null
  now: number | null
  relevant: string
  expect_empty: number
  tags: string
  split: string
  note?: string | null
}

function parseOr<T>(s: string | null | undefined, fallback: T): T {
  if (s === null || s === undefined || s === '') return fallback
  try {
    const v = JSON.parse(s) as T
    return v ?? fallback
  } catch {
    return fallback
  }
}

/** A DB row → a case. Malformed JSON columns read as empty (a hand-edited workspace never crashes a run). */
function rowToCase(r: CaseRowDb): EvalCaseRow {
  const relevant = parseOr<unknown>(r.relevant, [])
  const scope = parseOr<unknown>(r.scope, {})
  const tags = parseOr<unknown>(r.tags, [])
  return {
    id: r.id,
    name: r.name ?? '',
    query: r.query ?? '',
    cue: parseOr<Cue | null>(r.cue, null),
    scope: scope && typeof scope === 'object' && !Array.isArray(scope) ? scope : {},
    now: typeof r.now === 'number' && Number.isFinite(r.now) ? r.now : null,
    relevant: Array.isArray(relevant)
      ? (relevant as unknown[])
          .filter(
            (x): x is { id: string; grade: number } =>
              !!x && typeof (x as { id?: unknown }).id === 'string' && typeof (x as { grade?: unknown }).grade === 'number',
          )
          .map((x) => ({ id: x.id, grade: x.grade }))
      : [],
    expectEmpty: r.expect_empty === 1,
    tags: Array.isArray(tags) ? tags.filter((t): t is string => typeof t === 'string') : [],
    split: r.split === 'test' ? 'test' : 'train',
    note: r.note ?? null,
  }
}

const SELECT = `SELECT c.*, n.text AS note FROM eval_cases c LEFT JOIN notes n ON n.owner_type = 'eval_case' AND n.owner_id = c.id`

export interface CaseFilter {
  split?: 'train' | 'test' | 'all'
  tag?: string
  /** substring of id, name or query (case-insensitive) */
  search?: string
  ids?: string[]
  /** graded / expect-empty / unjudged */
  kind?: 'graded' | 'expectEmpty' | 'unjudged'
}

function whereOf(f: CaseFilter): { sql: string; params: Record<string, unknown> } {
  const parts: string[] = []
  const params: Record<string, unknown> = {}
  if (f.split && f.split !== 'all') {
    parts.push('c.split = @split')
    params.split = f.split
  }
  if (f.tag) {
    parts.push(`EXISTS (SELECT 1 FROM json_each(c.tags) t WHERE t.value = @tag)`)
    params.tag = f.tag
  }
  if (f.search && f.search.trim()) {
    parts.push(`(c.id LIKE @q ESCAPE '\\' OR c.name LIKE @q ESCAPE '\\' OR c.query LIKE @q ESCAPE '\\')`)
    params.q = `%${f.search.trim().replace(/[\\%_]/g, (ch) => `\\${ch}`)}%`
  }
  if (f.ids) {
    parts.push(`c.id IN (SELECT value FROM json_each(@ids))`)
    params.ids = JSON.stringify(f.ids)
  }
  if (f.kind === 'expectEmpty') parts.push('c.expect_empty = 1')
  else if (f.kind === 'graded') parts.push(`c.expect_empty = 0 AND json_array_length(c.relevant) > 0`)
  else if (f.kind === 'unjudged') parts.push(`c.expect_empty = 0 AND json_array_length(c.relevant) = 0`)
  return { sql: parts.length ? `WHERE ${parts.join(' AND ')}` : '', params }
}

/** Every case matching a filter, in id order (natural: `conv-26#2` before `conv-26#10`). */
export function loadCases(ws: Database.Database, f: CaseFilter = {}): EvalCaseRow[] {
  const w = whereOf(f)
  const rows = (ws.prepare(`${SELECT} ${w.sql}`).all(w.params) as CaseRowDb[]).map(rowToCase)
  return rows.sort((a, b) => naturalCompare(a.id, b.id))
}

// Made on first use: constructing a Collator loads ICU's collation data, ~12 ms of CPU, which every thread
// importing this module (the CLI, serve's main thread and store hosts) paid at start-up (docs/internals/testing.md).
let collator: Intl.Collator | null = null
function naturalCompare(a: string, b: string): number {
  collator ??= new Intl.Collator('en', { numeric: true })
  return collator.compare(a, b) || (a < b ? -1 : a > b ? 1 : 0)
}

type CaseSort = 'id' | 'name' | 'split' | 'relevant' | 'now'

/** A page of cases plus facets over all of them. */
export function listCases(ws: Database.Database, q: CaseFilter & { offset?: number; limit?: number; sort?: CaseSort; dir?: 'asc' | 'desc' } = {}): CasesPage {
  const t0 = performance.now()
  const offset = Math.max(0, q.offset ?? 0)
  const limit = Math.min(1000, Math.max(1, q.limit ?? 100))
  const all = loadCases(ws, q)
  const dir = q.dir === 'desc' ? -1 : 1
  const sort = q.sort ?? 'id'
  if (sort !== 'id' || dir === -1) {
    const key = (c: EvalCaseRow): string | number =>
      sort === 'relevant'
        ? c.expectEmpty
          ? -1
          : c.relevant.length
        : sort === 'now'
          ? (c.now ?? -Infinity)
          : sort === 'name'
            ? c.name
            : sort === 'split'
              ? c.split
              : c.id
    all.sort((a, b) => {
      const x = key(a)
      const y = key(b)
      const r = typeof x === 'number' && typeof y === 'number' ? x - y : naturalCompare(String(x), String(y))
      return r * dir || naturalCompare(a.id, b.id)
    })
  }
  return { rows: all.slice(offset, offset + limit), offset, limit, total: all.length, truncated: false, tookMs: performance.now() - t0, facets: caseFacets(ws) }
}

export function caseFacets(ws: Database.Database): CasesPage['facets'] {
  const f = ws
    .prepare(
      `SELECT count(*) AS total, sum(split = 'train') AS train, sum(split = 'test') AS test, sum(expect_empty = 1) AS expectEmpty,
              sum(expect_empty = 0 AND json_array_length(CASE WHEN json_valid(relevant) THEN relevant ELSE '[]' END) = 0) AS unjudged FROM eval_cases`,
    )
    .get() as Record<string, number | null>
  const tags = ws
    .prepare(
      `SELECT t.value AS tag, count(*) AS count FROM eval_cases c, json_each(CASE WHEN json_valid(c.tags) THEN c.tags ELSE '[]' END) t GROUP BY t.value ORDER BY count DESC, tag LIMIT 200`,
    )
    .all() as { tag: string; count: number }[]
  return { total: f.total ?? 0, train: f.train ?? 0, test: f.test ?? 0, expectEmpty: f.expectEmpty ?? 0, unjudged: f.unjudged ?? 0, tags }
}

export function getCase(ws: Database.Database, id: string): EvalCaseRow {
  const r = ws.prepare(`${SELECT} WHERE c.id = ?`).get(id) as CaseRowDb | undefined
  if (!r) throw new RecallscopeError('NOT_FOUND', `No eval case ${id}`)
  return rowToCase(r)
}

function writeCase(ws: Database.Database, c: EvalCaseRow, noteAt: number): 'added' | 'updated' {
  const existed = ws.prepare(`SELECT 1 FROM eval_cases WHERE id = ?`).get(c.id) !== undefined
  ws.prepare(
    `INSERT INTO eval_cases (id, name, query, cue, scope, now, relevant, expect_empty, tags, split) VALUES (@id, @name, @query, @cue, @scope, @now, @relevant, @expectEmpty, @tags, @split)
     ON CONFLICT(id) DO UPDATE SET name = excluded.name, query = excluded.query, cue = excluded.cue, scope = excluded.scope, now = excluded.now,
       relevant = excluded.relevant, expect_empty = excluded.expect_empty, tags = excluded.tags, split = excluded.split`,
  ).run({
    id: c.id,
    name: c.name,
    query: c.query,
    cue: c.cue ? JSON.stringify(c.cue) : null,
    scope: JSON.stringify(c.scope),
    now: c.now,
    relevant: JSON.stringify(c.relevant),
    expectEmpty: c.expectEmpty ? 1 : 0,
    tags: JSON.stringify(c.tags),
    split: c.split,
  })
  if (c.note !== undefined) {
    if (c.note === null || c.note === '') ws.prepare(`DELETE FROM notes WHERE owner_type = 'eval_case' AND owner_id = ?`).run(c.id)
    else
      ws.prepare(
        `INSERT INTO notes (owner_type, owner_id, text, updated_at) VALUES ('eval_case', ?, ?, ?) ON CONFLICT(owner_type, owner_id) DO UPDATE SET text = excluded.text, updated_at = excluded.updated_at`,
      ).run(c.id, c.note, noteAt)
  }
  return existed ? 'updated' : 'added'
}

export function deleteCases(ws: Database.Database, ids: string[]): number {
  let n = 0
  runWriteTransaction(ws, () => {
    const del = ws.prepare(`DELETE FROM eval_cases WHERE id = ?`)
    const delNote = ws.prepare(`DELETE FROM notes WHERE owner_type = 'eval_case' AND owner_id = ?`)
    for (const id of ids) {
      n += del.run(id).changes
      delNote.run(id)
    }
  })
  return n
}

/** Upsert cases in one transaction. */
export function writeCases(ws: Database.Database, rows: readonly EvalCaseRow[], noteAt: number): { added: number; updated: number } {
  let added = 0
  let updated = 0
  runWriteTransaction(ws, () => {
    for (const r of rows) {
      if (writeCase(ws, r, noteAt) === 'added') added++
      else updated++
    }
  })
  return { added, updated }
}
