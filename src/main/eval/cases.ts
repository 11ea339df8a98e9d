/**
 * Eval cases in the workspace DB (`eval_cases`, docs/internals/design.md "Data"): list, save,
 * delete, import (JSONL, LoCoMo QA) and export (JSONL).
 *
 * The row format is the one the LoCoMo importer writes (JSON columns `cue`,
 * `scope`, `relevant`, `tags`; answers and other free text in workspace
 * `notes` with owner_type 'eval_case'), so imported and hand-made cases are one
 * kind of thing. Only the workspace is written; the agent DB is read to check
 * that relevant ids exist (LoCoMo) and never modified.
 */
import crypto from 'node:crypto'
import { evalCaseInputSchema, type CasesImportReport, type EvalCaseInput, type EvalCaseRow } from '../../shared/eval'
import { badInput, RecallscopeError } from '../../shared/result'
import type { EvalCase } from '../../shared/types'
import type { MemorySource } from '../store/source'
import type { CaseFilter, Workspace } from '../store/workspace/workspace'
import { LOCOMO_CATEGORIES, parseEvidence, splitOf } from '../store/importers/locomo'
import { parseJsonSafe } from '../safety/json'

const DAY = 86_400_000
const MAX_ISSUES = 200

/** Validate a case (UI or JSONL), throwing BAD_INPUT naming the field. */
function parseCase(raw: unknown): ReturnType<typeof evalCaseInputSchema.parse> {
  const p = evalCaseInputSchema.safeParse(raw)
  if (!p.success) throw badInput('Invalid eval case', p.error, '(case)')
  return p.data
}

/** An id for a case saved without one: random from the UI, by content for an import (re-importing updates instead of duplicating). */
function newId(c: { query: string; scope: object; now: number | null }, byContent: boolean): string {
  if (!byContent) return `case-${crypto.randomUUID().slice(0, 13)}`
  return `case-${crypto
    .createHash('sha1')
    .update(JSON.stringify([c.query, c.scope, c.now]))
    .digest('hex')
    .slice(0, 12)}`
}

function dedupeRelevant(rel: { id: string; grade: number }[]): { id: string; grade: number }[] {
  const m = new Map<string, number>()
  for (const r of rel) m.set(r.id, Math.max(m.get(r.id) ?? 0, r.grade))
  return [...m].map(([id, grade]) => ({ id, grade }))
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
export function saveCase(ws: Workspace, input: EvalCaseInput, at: number): EvalCaseRow {
  const p = parseCase(input)
  const c = normalize(p, false)
  const row: EvalCaseRow = { ...c, note: p.note === undefined ? (undefined as unknown as null) : c.note }
  ws.writeCases([row], at)
  return ws.getCase(c.id)
}

// ---------------------------------------------------------------------------
// JSONL
// ---------------------------------------------------------------------------

/** One case per line, camelCase, the same fields `cases.save` takes (plus `note`). */
export function exportJsonl(ws: Workspace, f: CaseFilter = {}): { text: string; count: number } {
  const rows = ws.loadCases(f)
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

const SNAKE: Record<string, string> = {
  expect_empty: 'expectEmpty',
  agent_id: 'agentId',
  user_id: 'userId',
  session_id: 'sessionId',
  tenant_id: 'tenantId',
  current_step: 'currentStep',
  open_questions: 'openQuestions',
}

function camelize(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(camelize)
  if (v && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [SNAKE[k] ?? k, camelize(x)]))
  return v
}

/** Leniencies a hand-written JSONL line gets: relevant as bare ids (grade 1), `now` as an ISO date. */
function coerceLine(o: Record<string, unknown>): Record<string, unknown> {
  const out = { ...o }
  if (Array.isArray(out.relevant)) out.relevant = (out.relevant as unknown[]).map((r) => (typeof r === 'string' ? { id: r, grade: 1 } : r))
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
export function importJsonl(ws: Workspace, text: string, at: number): CasesImportReport {
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
  const { added, updated } = ws.writeCases(rows, at)
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
export function importLocomoQa(store: MemorySource, text: string, at: number): CasesImportReport {
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
    const end = store.memoriesWhere({ agentId: sample }, { limit: 1, order: 'created_desc' })[0]?.createdAt ?? null
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
      const note = [
        ans !== null ? `Answer: ${typeof ans === 'string' ? ans : JSON.stringify(ans)}` : null,
        adv !== null ? `Adversarial answer: ${typeof adv === 'string' ? adv : JSON.stringify(adv)}` : null,
      ]
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
  const { added, updated } = store.workspace.writeCases(rows, at)
  return { format: 'locomo', added, updated, skipped, issues: issues.list, issuesTruncated: issues.truncated, tookMs: performance.now() - t0 }
}
