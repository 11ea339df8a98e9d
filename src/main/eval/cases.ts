/**
 * Eval cases in the workspace DB (`eval_cases`, DESIGN.md "Data"): list, save,
 * delete, import (JSONL, LoCoMo QA) and export (JSONL).
 *
 * The row format is the one the LoCoMo importer writes (JSON columns `cue`,
 * `scope`, `relevant`, `tags`; answers and other free text in workspace
 * `notes` with owner_type 'eval_case'), so imported and hand-made cases are one
 * kind of thing. Only the workspace is written; the agent DB is read to check
 * that relevant ids exist (LoCoMo) and never modified.
 */
import crypto from 'node:crypto'
import type Database from 'better-sqlite3'
import { evalCaseInputSchema, type CasesImportReport, type CasesPage, type EvalCaseInput, type EvalCaseRow } from '../../shared/eval'
import { RecallscopeError } from '../../shared/result'
import type { Cue, EvalCase } from '../../shared/types'
import type { Store } from '../store/open'
import { LOCOMO_CATEGORIES, parseEvidence, splitOf } from '../store/importers/locomo'
import { parseJsonSafe } from '../safety/json'

const DAY = 86_400_000
const MAX_ISSUES = 200

interface CaseRowDb {
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
export function rowToCase(r: CaseRowDb): EvalCaseRow {
  const relevant = parseOr<unknown>(r.relevant, [])
  const scope = parseOr<unknown>(r.scope, {})
  const tags = parseOr<unknown>(r.tags, [])
  return {
    id: r.id,
    name: r.name ?? '',
    query: r.query ?? '',
    cue: parseOr<Cue | null>(r.cue, null),
    scope: scope && typeof scope === 'object' && !Array.isArray(scope) ? (scope as EvalCase['scope']) : {},
    now: typeof r.now === 'number' && Number.isFinite(r.now) ? r.now : null,
    relevant: Array.isArray(relevant)
      ? relevant.filter((x): x is { id: string; grade: number } => !!x && typeof x.id === 'string' && typeof x.grade === 'number').map((x) => ({ id: x.id, grade: x.grade }))
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

const collator = new Intl.Collator('en', { numeric: true })
export function naturalCompare(a: string, b: string): number {
  return collator.compare(a, b) || (a < b ? -1 : a > b ? 1 : 0)
}

const SORTS = { id: 'id', name: 'name', split: 'split', relevant: 'relevant', now: 'now' } as const

/** A page of cases plus facets over all of them. */
export function listCases(ws: Database.Database, q: CaseFilter & { offset?: number; limit?: number; sort?: keyof typeof SORTS; dir?: 'asc' | 'desc' } = {}): CasesPage {
  const t0 = performance.now()
  const offset = Math.max(0, q.offset ?? 0)
  const limit = Math.min(1000, Math.max(1, q.limit ?? 100))
  const all = loadCases(ws, q)
  const dir = q.dir === 'desc' ? -1 : 1
  const sort = q.sort ?? 'id'
  if (sort !== 'id' || dir === -1) {
    const key = (c: EvalCaseRow): string | number => (sort === 'relevant' ? (c.expectEmpty ? -1 : c.relevant.length) : sort === 'now' ? (c.now ?? -Infinity) : sort === 'name' ? c.name : sort === 'split' ? c.split : c.id)
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
    .prepare(`SELECT t.value AS tag, count(*) AS count FROM eval_cases c, json_each(CASE WHEN json_valid(c.tags) THEN c.tags ELSE '[]' END) t GROUP BY t.value ORDER BY count DESC, tag LIMIT 200`)
    .all() as { tag: string; count: number }[]
  return { total: f.total ?? 0, train: f.train ?? 0, test: f.test ?? 0, expectEmpty: f.expectEmpty ?? 0, unjudged: f.unjudged ?? 0, tags }
}

export function getCase(ws: Database.Database, id: string): EvalCaseRow {
  const r = ws.prepare(`${SELECT} WHERE c.id = ?`).get(id) as CaseRowDb | undefined
  if (!r) throw new RecallscopeError('NOT_FOUND', `No eval case ${id}`)
  return rowToCase(r)
}

/** Validate a case (UI or JSONL), throwing BAD_INPUT naming the field. */
export function parseCase(raw: unknown): ReturnType<typeof evalCaseInputSchema.parse> {
  const p = evalCaseInputSchema.safeParse(raw)
  if (!p.success) {
    const i = p.error.issues[0]
    throw new RecallscopeError('BAD_INPUT', `Invalid eval case: ${i?.path.join('.') || '(case)'}: ${i?.message ?? 'rejected'}`, {
      issues: p.error.issues.map((x) => ({ path: x.path.join('.'), message: x.message })),
    })
  }
  return p.data
}

/** An id for a case saved without one: random from the UI, by content for an import (re-importing updates instead of duplicating). */
function newId(c: { query: string; scope: object; now: number | null }, byContent: boolean): string {
  if (!byContent) return `case-${crypto.randomUUID().slice(0, 13)}`
  return `case-${crypto.createHash('sha1').update(JSON.stringify([c.query, c.scope, c.now])).digest('hex').slice(0, 12)}`
}

function dedupeRelevant(rel: { id: string; grade: number }[]): { id: string; grade: number }[] {
  const m = new Map<string, number>()
  for (const r of rel) m.set(r.id, Math.max(m.get(r.id) ?? 0, r.grade))
  return [...m].map(([id, grade]) => ({ id, grade }))
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
      ws.prepare(`INSERT INTO notes (owner_type, owner_id, text, updated_at) VALUES ('eval_case', ?, ?, ?) ON CONFLICT(owner_type, owner_id) DO UPDATE SET text = excluded.text, updated_at = excluded.updated_at`).run(
        c.id,
        c.note,
        noteAt,
      )
  }
  return existed ? 'updated' : 'added'
}

function normalize(p: ReturnType<typeof parseCase>, byContent: boolean): EvalCaseRow {
  const scope = Object.fromEntries(Object.entries(p.scope).filter(([, v]) => v !== undefined && v !== '')) as EvalCase['scope']
  const id = p.id ?? newId({ query: p.query, scope, now: p.now }, byContent)
  return {
    id,
    name: p.name.trim() || p.query.trim().slice(0, 80),
    query: p.query,
    cue: p.cue,
    scope,
    now: p.now,
    relevant: dedupeRelevant(p.relevant),
    expectEmpty: p.expectEmpty,
    tags: [...new Set(p.tags)],
    split: p.split ?? splitOf(id),
    note: p.note === undefined ? null : p.note,
  }
}

/**
 * Create or update one case. `at` stamps the note (explicit so tests are exact).
 * The note is left alone when the input does not carry one.
 */
export function saveCase(ws: Database.Database, input: EvalCaseInput, at: number): EvalCaseRow {
  const p = parseCase(input)
  const c = normalize(p, false)
  const row: EvalCaseRow = { ...c, note: p.note === undefined ? (undefined as unknown as null) : c.note }
  ws.transaction(() => writeCase(ws, row, at))()
  return getCase(ws, c.id)
}

export function deleteCases(ws: Database.Database, ids: string[]): number {
  let n = 0
  ws.transaction(() => {
    const del = ws.prepare(`DELETE FROM eval_cases WHERE id = ?`)
    const delNote = ws.prepare(`DELETE FROM notes WHERE owner_type = 'eval_case' AND owner_id = ?`)
    for (const id of ids) {
      n += del.run(id).changes
      delNote.run(id)
    }
  })()
  return n
}

// ---------------------------------------------------------------------------
// JSONL
// ---------------------------------------------------------------------------

/** One case per line, camelCase, the same fields `cases.save` takes (plus `note`). */
export function exportJsonl(ws: Database.Database, f: CaseFilter = {}): { text: string; count: number } {
  const rows = loadCases(ws, f)
  const lines = rows.map((c) => {
    const o: Record<string, unknown> = { id: c.id, name: c.name, query: c.query }
    if (c.cue) o.cue = c.cue
    o.scope = c.scope
    o.now = c.now
    o.relevant = c.relevant
    o.expectEmpty = c.expectEmpty
    o.tags = c.tags
    o.split = c.split
    if (c.note) o.note = c.note
    return JSON.stringify(o)
  })
  return { text: lines.length ? `${lines.join('\n')}\n` : '', count: rows.length }
}

const SNAKE: Record<string, string> = { expect_empty: 'expectEmpty', agent_id: 'agentId', user_id: 'userId', session_id: 'sessionId', tenant_id: 'tenantId', current_step: 'currentStep', open_questions: 'openQuestions' }

function camelize(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(camelize)
  if (v && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [SNAKE[k] ?? k, camelize(x)]))
  return v
}

/** Leniencies a hand-written JSONL line gets: relevant as bare ids (grade 1), `now` as an ISO date. */
function coerceLine(o: Record<string, unknown>): Record<string, unknown> {
  const out = { ...o }
  if (Array.isArray(out.relevant)) out.relevant = out.relevant.map((r) => (typeof r === 'string' ? { id: r, grade: 1 } : r))
  if (typeof out.now === 'string') {
    const t = /^-?\d+$/.test(out.now.trim()) ? Number(out.now) : Date.parse(out.now)
    if (Number.isFinite(t)) out.now = t
  }
  if (out.scope === null) delete out.scope
  return out
}

class Issues {
  list: { where: string; reason: string }[] = []
  truncated = false
  add(where: string, reason: string) {
    if (this.list.length < MAX_ISSUES) this.list.push({ where, reason })
    else this.truncated = true
  }
}

/** Import JSONL cases (upsert by id). A bad line is skipped and reported, never fatal. */
export function importJsonl(ws: Database.Database, text: string, at: number): CasesImportReport {
  const t0 = performance.now()
  const issues = new Issues()
  const rows: EvalCaseRow[] = []
  let skipped = 0
  const lines = text.split(/\r?\n/)
  lines.forEach((line, i) => {
    const s = line.trim()
    if (s === '' || s.startsWith('//')) return
    const parsed = parseJsonSafe(s) // depth-limited; the reason never quotes the line (safety/json)
    if (!parsed.ok) {
      skipped++
      issues.add(`line ${i + 1}`, `not JSON (${parsed.reason})`)
      return
    }
    const raw = parsed.value
    if (!raw || typeof raw !== 'object' || Array.isArray(raw)) {
      skipped++
      issues.add(`line ${i + 1}`, 'not an object')
      return
    }
    try {
      rows.push(normalize(parseCase(coerceLine(camelize(raw) as Record<string, unknown>)), true))
    } catch (e) {
      skipped++
      issues.add(`line ${i + 1}`, (e as Error).message.replace(/^Invalid eval case: /, ''))
    }
  })
  let added = 0
  let updated = 0
  ws.transaction(() => {
    for (const r of rows) (writeCase(ws, r, at) === 'added' ? added++ : updated++)
  })()
  return { format: 'jsonl', added, updated, skipped, issues: issues.list, issuesTruncated: issues.truncated, tookMs: performance.now() - t0 }
}

// ---------------------------------------------------------------------------
// LoCoMo QA into an open DB
// ---------------------------------------------------------------------------

/**
 * LoCoMo QA items → cases for a DB that holds the conversations (imported with
 * `import locomo`, ids `${sample_id}:D<session>:<turn>`). The same mapping as the
 * importer (id `${sample_id}#${index}`, scope {agentId}, evidence → grade-1
 * relevant ids, now = last turn + 1 day, split by id hash, answers as notes), so
 * re-importing refreshes cases instead of duplicating them. A conversation the
 * DB does not hold is skipped and reported.
 */
export function importLocomoQa(store: Store, text: string, at: number): CasesImportReport {
  const t0 = performance.now()
  const parsed = parseJsonSafe(text) // the reason never quotes the text (safety/json)
  if (!parsed.ok) throw new RecallscopeError('BAD_INPUT', `Not valid JSON (${parsed.reason})`)
  const data: unknown = parsed.value
  const convs: unknown[] = Array.isArray(data) ? data : data && typeof data === 'object' && 'qa' in data ? [data] : []
  if (convs.length === 0) throw new RecallscopeError('BAD_INPUT', 'Not LoCoMo data: expected a list of {sample_id, conversation, qa}')
  const issues = new Issues()
  const rows: EvalCaseRow[] = []
  let skipped = 0
  for (let ci = 0; ci < convs.length; ci++) {
    const c = convs[ci] as Record<string, unknown>
    const sample = c && typeof c === 'object' && (typeof c.sample_id === 'string' || typeof c.sample_id === 'number') ? String(c.sample_id).trim() : null
    const qa = c && Array.isArray(c.qa) ? (c.qa as unknown[]) : null
    if (!sample || !qa) {
      skipped += qa?.length ?? 0
      issues.add(`conversation #${ci}`, 'no sample_id or qa list')
      continue
    }
    const end = store.db.prepare(`SELECT max(m.created_at) FROM (${store.source.memoriesLite ?? store.source.memories}) m WHERE m.agent_id = ?`).pluck().get(sample) as number | null
    if (end === null || end === undefined) {
      skipped += qa.length
      issues.add(sample, 'conversation not in this DB (import it with `recallscope import locomo`)')
      continue
    }
    // Which evidence ids exist here: one lookup for the whole conversation.
    const wanted = new Set<string>()
    const parsed = qa.map((q) => {
      const item = q as Record<string, unknown>
      const ev: unknown[] = Array.isArray(item?.evidence) ? item.evidence : item?.evidence === undefined || item?.evidence === null ? [] : [item.evidence]
      const ids: string[] = []
      const bad: string[] = []
      for (const e of ev) {
        const p = parseEvidence(e)
        for (const id of p.ids) ids.push(`${sample}:${id}`)
        bad.push(...p.bad)
      }
      for (const id of ids) wanted.add(id)
      return { item, ids, bad }
    })
    const have = store.getMemories([...wanted])
    parsed.forEach(({ item, ids, bad }, qi) => {
      const where = `${sample}#${qi}`
      if (!item || typeof item.question !== 'string' || item.question.trim() === '') {
        skipped++
        issues.add(where, 'QA item without a question')
        return
      }
      for (const b of bad) issues.add(where, `malformed evidence id ${JSON.stringify(b)}`)
      const relevant: { id: string; grade: number }[] = []
      for (const id of ids) {
        if (!have.has(id)) issues.add(where, `evidence ${id} names no memory in this DB`)
        else if (!relevant.some((r) => r.id === id)) relevant.push({ id, grade: 1 })
      }
      const cat = Number(item.category)
      const tags = [`category:${Number.isFinite(cat) ? cat : 'unknown'}`, `conv:${sample}`]
      if (LOCOMO_CATEGORIES[cat]) tags.push(LOCOMO_CATEGORIES[cat])
      if (relevant.length === 0) tags.push('no-evidence')
      const ans = item.answer ?? null
      const adv = item.adversarial_answer ?? null
      const note = [ans !== null ? `Answer: ${typeof ans === 'string' ? ans : JSON.stringify(ans)}` : null, adv !== null ? `Adversarial answer: ${typeof adv === 'string' ? adv : JSON.stringify(adv)}` : null]
        .filter(Boolean)
        .join('\n')
      const q = item.question.trim()
      rows.push({
        id: where,
        name: q.length <= 80 ? q : `${q.slice(0, 79)}…`,
        query: item.question,
        cue: null,
        scope: { agentId: sample },
        now: end + DAY,
        relevant,
        expectEmpty: false,
        tags,
        split: splitOf(where),
        note: note || null,
      })
    })
  }
  let added = 0
  let updated = 0
  store.ws.transaction(() => {
    for (const r of rows) (writeCase(store.ws, r, at) === 'added' ? added++ : updated++)
  })()
  return { format: 'locomo', added, updated, skipped, issues: issues.list, issuesTruncated: issues.truncated, tookMs: performance.now() - t0 }
}
