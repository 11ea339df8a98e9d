/**
 * `import locomo`: the LoCoMo benchmark's conversation JSON (Maharana et al., 2024;
 * layout and quirks in ../shared/data/README.md) → a canonical DB of dialogue
 * turns plus, in the output's workspace DB, one eval case per QA item.
 *
 * Mapping (decisions, with reasons):
 * - agent_id = sample_id. LoCoMo retrieves within one conversation, and every eval
 *   case is scoped `{agentId: sample_id}`, so one "agent" per conversation makes the
 *   benchmark's scope the ordinary recall scope.
 * - role: speaker_a → 'user', speaker_b → 'assistant' (speaker_a opens every
 *   conversation); user_id = `${sample_id}:${speaker}` because names repeat across
 *   conversations (two different Johns in conv-41 and conv-43).
 * - content = `${speaker}: ${text}`, plus ` [shares ${blip_caption}]` for a shared
 *   image. That is the unit the paper's retrievers embed (speaker + text + caption,
 *   task_eval/dpr_qa.py); without the name, "What did Caroline…" cannot match the
 *   turn lexically, and many questions ask about "the photo". The image URL, its
 *   search query and the session's observations about the turn are in metadata.
 * - created_at = the session's `date_time` parsed as UTC + position × 1 minute,
 *   so turns keep their order and recency works.
 * - Sessions come from the `session_N` lists, never from the date keys (some date
 *   keys have no list: reported and skipped).
 * - Eval cases: id `${sample_id}#${index}` (index into that conversation's `qa`),
 *   relevant = evidence dia_ids → memory ids (grade 1), now = last turn + 1 day.
 *   Answers are not recall targets; they go into workspace notes (owner_type
 *   'eval_case') so the schema stays as docs/internals/design.md fixes it.
 * - split: train/test from the parity of sha1(case id): stable whatever order or
 *   subset of conversations is imported, and every category lands in both halves.
 */
import { cellText } from '../decode'
import crypto from 'node:crypto'
import path from 'node:path'
import { RecallscopeError } from '../../../shared/result'
import { hashEmbed, HASHING_MODEL } from '../../embed/hashing'
import { checkPaths, makeTicker, pruneMinorityDims, ReportBuilder, withOutput, type ImportOptions, type ImportReport, type Importer } from './common'
import type { WorkspaceWriter } from './common'
import type { CanonicalWriter } from '../sqlite/canonicalWriter'
import { parseJsonSafe } from '../../safety/json'
import { readRegularFile } from '../safeFiles'

const MINUTE = 60_000
const DAY = 86_400_000
const MONTHS = ['jan', 'feb', 'mar', 'apr', 'may', 'jun', 'jul', 'aug', 'sep', 'oct', 'nov', 'dec']

/** LoCoMo categories (data README). */
export const LOCOMO_CATEGORIES: Record<number, string> = { 1: 'multi-hop', 2: 'temporal', 3: 'open-domain', 4: 'single-hop', 5: 'adversarial' }

/** "1:56 pm on 8 May, 2023" → epoch ms, read as UTC so every machine imports the same numbers. */
export function parseLocomoDate(s: unknown): number | null {
  if (typeof s !== 'string') return null
  const m = /^\s*(\d{1,2}):(\d{2})\s*([ap])\.?m\.?\s+on\s+(\d{1,2})\s+([A-Za-z]+)\.?,?\s+(\d{4})\s*$/i.exec(s)
  if (!m) return null
  let hour = Number(m[1])
  const minute = Number(m[2])
  if (hour < 1 || hour > 12 || minute > 59) return null
  const pm = m[3].toLowerCase() === 'p'
  if (hour === 12) hour = pm ? 12 : 0
  else if (pm) hour += 12
  const month = MONTHS.indexOf(m[5].slice(0, 3).toLowerCase())
  if (month < 0) return null
  const day = Number(m[4])
  const year = Number(m[6])
  const t = Date.UTC(year, month, day, hour, minute)
  // Reject 31 June and friends instead of rolling over into the next month.
  if (new Date(t).getUTCDate() !== day) return null
  return t
}

/** One dialogue id ("D1:3") in canonical form, or null. Accepts the known typos "D:11:26" and "D30:05". */
export function normalizeDiaId(raw: string): string | null {
  const m = /^D\s*:?\s*(\d+)\s*:\s*(\d+)$/i.exec(raw.trim())
  return m ? `D${Number(m[1])}:${Number(m[2])}` : null
}

/**
 * An evidence entry → dia ids. Handles "D8:6; D9:17" (two ids in one string),
 * "D:11:26" and "D30:05" (repaired), "D" (rejected).
 */
export function parseEvidence(raw: unknown): { ids: string[]; split: boolean; repaired: { from: string; to: string }[]; bad: string[] } {
  const out = { ids: [] as string[], split: false, repaired: [] as { from: string; to: string }[], bad: [] as string[] }
  if (typeof raw !== 'string') {
    out.bad.push(JSON.stringify(raw) ?? String(raw))
    return out
  }
  const pieces = raw
    .split(/\s*[;,]\s*|\s+(?=D)/i)
    .map((p) => p.trim())
    .filter(Boolean)
  if (pieces.length > 1) out.split = true
  if (pieces.length === 0) out.bad.push(raw)
  for (const p of pieces) {
    const id = normalizeDiaId(p)
    if (id === null) out.bad.push(p)
    else {
      if (id !== p) out.repaired.push({ from: p, to: id })
      out.ids.push(id)
    }
  }
  return out
}

/** Deterministic ~50/50 split by case id. */
export function splitOf(caseId: string): 'train' | 'test' {
  return crypto.createHash('sha1').update(caseId).digest()[0] & 1 ? 'test' : 'train'
}

function truncate(s: string, n: number): string {
  return s.length <= n ? s : `${s.slice(0, n - 1)}…`
}

function isObj(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v)
}

function answerText(v: unknown): string | null {
  if (v === undefined || v === null) return null
  return typeof v === 'string' ? v : JSON.stringify(v)
}

interface EvalRow {
  id: string
  name: string
  query: string
  scope: string
  now: number | null
  relevant: string
  tags: string
  split: 'train' | 'test'
  note: string | null
}

/** What the phases of one LoCoMo import share: the writer, the report and the running counts. */
interface LocomoRun {
  w: CanonicalWriter
  rb: ReportBuilder
  embed: NonNullable<ImportOptions['embed']>
  cases: EvalRow[]
  seenSamples: Set<string>
  memories: number
  sessions: number
  /** sessions named by a list or a date key, for the closing note */
  declaredSessions: number
}

/** What one conversation's sessions share. */
interface LocomoConv {
  sample: string
  conv: Record<string, unknown>
  speakerA: string | null
  speakerB: string | null
  /** dia id → observations drawn from that turn */
  observations: Map<string, string[]>
  summaries: Record<string, unknown>
  /** memory ids written so far in this conversation */
  memIds: Set<string>
}

/** Import a LoCoMo JSON file: turns into a new canonical DB, QA items into its workspace's eval cases. */
export async function importLocomo(opts: ImportOptions): Promise<ImportReport> {
  const t0 = performance.now()
  const { input, output } = checkPaths(opts)
  const importedAt = opts.now ?? Date.now()
  const convs = readLocomoConversations(input)
  const rb = new ReportBuilder(opts.maxIssues)
  const tick = makeTicker(opts, convs.length, 1)

  const { result, workspace } = await withOutput(
    output,
    opts,
    true,
    async (w, ws) => {
      const run: LocomoRun = { w, rb, embed: opts.embed ?? 'hashing', cases: [], seenSamples: new Set(), memories: 0, sessions: 0, declaredSessions: 0 }
      for (let ci = 0; ci < convs.length; ci++) {
        await tick(ci, 'conversations')
        importConversation(run, convs[ci], ci)
      }
      await tick(convs.length, 'conversations')
      writeEvalCases(ws!, run, path.basename(input), importedAt)
      const models = pruneMinorityDims(w.db, rb, (ot, id) => ({ id }))
      const embeddings = models.reduce((n, m) => n + m.count, 0)
      rb.notes.push(`${convs.length} conversations: ${run.declaredSessions} sessions declared (lists or date keys), ${run.sessions} with turns imported`)
      return { memories: run.memories, sessions: run.sessions, embeddings, models, evalCases: run.cases.length }
    },
    () => `${input} has no LoCoMo dialogue turns to import`,
  )
  return rb.build({
    importer: 'locomo',
    input,
    output,
    workspace,
    layout: null,
    written: { memories: result.memories, sessions: result.sessions, embeddings: result.embeddings, evalCases: result.evalCases },
    models: result.models,
    tookMs: Math.round(performance.now() - t0),
  })
}

/** Parse the file into its list of conversations; a file that is not JSON or not LoCoMo-shaped is BAD_INPUT. */
function readLocomoConversations(input: string): unknown[] {
  // Never quote the file in the error (it may be any file the caller named), and bound its nesting.
  const parsed = parseJsonSafe(readRegularFile(input, 'LoCoMo file').toString('utf8'))
  if (!parsed.ok) throw new RecallscopeError('BAD_INPUT', `${input} is not valid JSON (${parsed.reason})`)
  const data: unknown = parsed.value
  // A single conversation object is accepted as a list of one.
  const convs: unknown[] = Array.isArray(data) ? data : isObj(data) && 'conversation' in data ? [data] : []
  if (!Array.isArray(data) && convs.length === 0)
    throw new RecallscopeError('BAD_INPUT', `${input} is not LoCoMo data: expected a list of {sample_id, conversation, qa}`)
  return convs
}

/** Import one conversation: its sessions and turns, then its QA items as eval cases. Skips (and reports) a malformed or repeated one. */
function importConversation(run: LocomoRun, c: unknown, ci: number): void {
  const { rb } = run
  if (!isObj(c)) {
    rb.skip('conversation is not an object', { id: `#${ci}` })
    return
  }
  let sample = typeof c.sample_id === 'string' && c.sample_id.trim() ? c.sample_id.trim() : typeof c.sample_id === 'number' ? String(c.sample_id) : null
  if (sample === null) {
    sample = `conv-${ci}`
    rb.repair('conversation without sample_id (named by position)', { id: sample })
  }
  if (run.seenSamples.has(sample)) {
    rb.skip('duplicate sample_id (first kept)', { id: sample })
    return
  }
  run.seenSamples.add(sample)
  const conv = c.conversation
  if (!isObj(conv)) {
    rb.skip('conversation has no `conversation` object', { id: sample })
    return
  }
  const lists = listSessions(run, conv, sample)
  const cv: LocomoConv = {
    sample,
    conv,
    speakerA: typeof conv.speaker_a === 'string' ? conv.speaker_a : null,
    speakerB: typeof conv.speaker_b === 'string' ? conv.speaker_b : null,
    observations: collectObservations(c.observation),
    summaries: isObj(c.session_summary) ? c.session_summary : {},
    memIds: new Set(),
  }
  let convEnd: number | null = null
  let prevEnd: number | null = null
  for (const { n, turns } of lists) {
    const last = writeLocomoSession(run, cv, n, turns, prevEnd)
    if (last !== null) {
      prevEnd = last
      convEnd = convEnd === null ? last : Math.max(convEnd, last)
    }
  }
  // QA → eval cases.
  const qa = Array.isArray(c.qa) ? c.qa : null
  if (qa === null) {
    rb.notes.push(`${sample} has no qa list`)
    return
  }
  for (let qi = 0; qi < qa.length; qi++) addEvalCase(run, cv, qa[qi], qi, convEnd)
}

/** The conversation's session lists in numeric order (session_10 after session_9); counts the declared sessions, reports dates without a list. */
function listSessions(run: LocomoRun, conv: Record<string, unknown>, sample: string): { n: number; turns: unknown[] }[] {
  const lists: { n: number; turns: unknown[] }[] = []
  const dateKeys = new Set<number>()
  for (const [k, v] of Object.entries(conv)) {
    const ml = /^session_(\d+)$/.exec(k)
    const md = /^session_(\d+)_date_time$/.exec(k)
    if (ml) {
      if (Array.isArray(v)) lists.push({ n: Number(ml[1]), turns: v })
      else run.rb.skip('session is not a list', { id: sample, session: k })
    } else if (md) dateKeys.add(Number(md[1]))
  }
  lists.sort((a, b) => a.n - b.n)
  const listNs = new Set(lists.map((l) => l.n))
  run.declaredSessions += new Set([...listNs, ...dateKeys]).size
  for (const n of [...dateKeys].sort((a, b) => a - b))
    if (!listNs.has(n)) run.rb.skip('date without a session list', { id: sample, session: `session_${n}`, detail: String(conv[`session_${n}_date_time`]) })
  return lists
}

/** Observations name the turns they were drawn from: map each dia id to its observations, to attach them to those turns. */
function collectObservations(observation: unknown): Map<string, string[]> {
  const observations = new Map<string, string[]>()
  if (!isObj(observation)) return observations
  for (const perSession of Object.values(observation)) {
    if (!isObj(perSession)) continue
    for (const items of Object.values(perSession)) {
      if (!Array.isArray(items)) continue
      for (const it of items) {
        if (!Array.isArray(it) || typeof it[0] !== 'string') continue
        const refs = Array.isArray(it[1]) ? it[1] : [it[1]]
        for (const ref of refs) {
          for (const id of parseEvidence(ref).ids) {
            const list = observations.get(id) ?? []
            list.push(it[0])
            observations.set(id, list)
          }
        }
      }
    }
  }
  return observations
}

/**
 * Write session `n`'s turns and, if any was written, the session row. Returns its last turn's time
 * (null when it has none), which places the next session when that one's date is missing.
 */
function writeLocomoSession(run: LocomoRun, cv: LocomoConv, n: number, turns: unknown[], prevEnd: number | null): number | null {
  const { rb, w } = run
  const { sample, conv } = cv
  const sk = `session_${n}`
  const sid = `${sample}:${sk}`
  if (turns.length === 0) {
    rb.skip('empty session list', { id: sample, session: sk })
    return null
  }
  let base = parseLocomoDate(conv[`${sk}_date_time`])
  if (base === null) {
    const raw = conv[`${sk}_date_time`]
    if (prevEnd !== null) {
      base = prevEnd + 60 * MINUTE
      rb.repair('session date missing or unparseable (placed 1 h after the previous session)', { id: sample, session: sk, detail: String(raw) })
    } else rb.repair('session date missing or unparseable (created_at NULL)', { id: sample, session: sk, detail: String(raw) })
  }
  let first: number | null = null
  let last: number | null = null
  let written = 0
  for (let i = 0; i < turns.length; i++) {
    const at = writeLocomoTurn(run, cv, n, turns[i], i, base)
    if (at === undefined) continue
    written++
    if (at !== null) {
      first ??= at
      last = at
    }
  }
  if (written === 0) return null
  const summary = typeof cv.summaries[`${sk}_summary`] === 'string' ? (cv.summaries[`${sk}_summary`] as string) : null
  w.session({
    id: sid,
    agent_id: sample,
    user_id: cv.speakerA ? `${sample}:${cv.speakerA}` : null,
    tenant_id: null,
    started_at: first,
    ended_at: last,
    summary,
    is_archived: 0,
  })
  if (run.embed === 'hashing' && summary) w.embedding('session', sid, HASHING_MODEL, hashEmbed(summary))
  run.sessions++
  return last
}

/**
 * Write turn `i` of session `n` as a memory. Returns its created_at (null when the session has no date),
 * or undefined when the turn is skipped.
 */
function writeLocomoTurn(run: LocomoRun, cv: LocomoConv, n: number, t: unknown, i: number, base: number | null): number | null | undefined {
  const { rb, w } = run
  const { sample, conv } = cv
  const sk = `session_${n}`
  if (!isObj(t)) {
    rb.skip('turn is not an object', { id: sample, session: sk, detail: `position ${i + 1}` })
    return undefined
  }
  const caption = typeof t.blip_caption === 'string' && t.blip_caption.trim() ? t.blip_caption.trim() : null
  const text = typeof t.text === 'string' ? t.text : null
  if (text === null && caption === null) {
    rb.skip('turn without text', { id: sample, session: sk, detail: cellText(t.dia_id ?? `position ${i + 1}`) })
    return undefined
  }
  let dia = typeof t.dia_id === 'string' ? normalizeDiaId(t.dia_id) : null
  if (dia === null) {
    dia = `D${n}:${i + 1}`
    rb.repair('turn without a valid dia_id (numbered by position)', {
      id: sample,
      session: sk,
      detail: `${JSON.stringify(t.dia_id ?? null)} → ${dia}`,
    })
  } else if (dia !== t.dia_id) rb.repair('turn dia_id normalised', { id: sample, session: sk, detail: `${String(t.dia_id)} → ${dia}` })
  const mid = `${sample}:${dia}`
  if (cv.memIds.has(mid)) {
    rb.skip('duplicate dia_id (first kept)', { id: mid, session: sk })
    return undefined
  }
  const speaker = typeof t.speaker === 'string' && t.speaker.trim() ? t.speaker.trim() : null
  let role: string | null = null
  if (speaker !== null && speaker === cv.speakerA) role = 'user'
  else if (speaker !== null && speaker === cv.speakerB) role = 'assistant'
  else rb.repair('speaker is neither speaker_a nor speaker_b (role cleared)', { id: mid, detail: String(speaker) })
  const body = [speaker ? `${speaker}: ${text ?? ''}`.trimEnd() : (text ?? ''), caption ? `[shares ${caption}]` : ''].filter(Boolean).join(' ')
  const at: number | null = base === null ? null : base + i * MINUTE
  const meta: Record<string, unknown> = { dia_id: dia, session: n }
  if (speaker) meta.speaker = speaker
  if (typeof conv[`${sk}_date_time`] === 'string') meta.date_time = conv[`${sk}_date_time`]
  if (t.img_url !== undefined) meta.img_url = t.img_url
  if (caption) meta.blip_caption = caption
  if (typeof t.query === 'string') meta.img_query = t.query
  const obs = cv.observations.get(dia)
  if (obs) meta.observations = obs
  w.memory({
    id: mid,
    agent_id: sample,
    user_id: speaker ? `${sample}:${speaker}` : null,
    session_id: `${sample}:${sk}`,
    role,
    kind: 'episodic',
    tier: 'working',
    content: body,
    summary: null,
    salience: null,
    created_at: at as number,
    last_used_at: null,
    use_count: null,
    turn: i + 1,
    source: 'locomo',
    metadata: JSON.stringify(meta),
  })
  if (run.embed === 'hashing') w.embedding('memory', mid, HASHING_MODEL, hashEmbed(body))
  cv.memIds.add(mid)
  run.memories++
  return at
}

/** QA item `qi` → an eval case (relevant = its evidence turns that exist), or a skip when it has no question. */
function addEvalCase(run: LocomoRun, cv: LocomoConv, q: unknown, qi: number, convEnd: number | null): void {
  const { rb } = run
  const { sample } = cv
  const caseId = `${sample}#${qi}`
  if (!isObj(q) || typeof q.question !== 'string' || q.question.trim() === '') {
    rb.skip('QA item without a question', { qa: caseId })
    return
  }
  const evidence: unknown[] = Array.isArray(q.evidence) ? q.evidence : q.evidence === undefined || q.evidence === null ? [] : [q.evidence]
  const relevant: string[] = []
  for (const ev of evidence) {
    const p = parseEvidence(ev)
    const evText = typeof ev === 'string' ? ev : JSON.stringify(ev)
    if (p.split) rb.repair('several evidence ids in one string (split)', { qa: caseId, evidence: evText, detail: p.ids.join(', ') })
    for (const r of p.repaired) rb.repair('malformed evidence id (normalised)', { qa: caseId, evidence: r.from, detail: r.to })
    for (const b of p.bad) rb.skip('malformed evidence id', { qa: caseId, evidence: b })
    for (const id of p.ids) {
      const mid = `${sample}:${id}`
      if (!cv.memIds.has(mid)) rb.skip('evidence id names no turn', { qa: caseId, evidence: id })
      else if (!relevant.includes(mid)) relevant.push(mid)
    }
  }
  const cat = typeof q.category === 'number' ? q.category : Number(q.category)
  const tags = [`category:${Number.isFinite(cat) ? cat : 'unknown'}`, `conv:${sample}`]
  if (LOCOMO_CATEGORIES[cat]) tags.push(LOCOMO_CATEGORIES[cat])
  if (relevant.length === 0) tags.push('no-evidence')
  const answer = answerText(q.answer)
  const adv = answerText(q.adversarial_answer)
  const note = [answer !== null ? `Answer: ${answer}` : null, adv !== null ? `Adversarial answer: ${adv}` : null].filter(Boolean).join('\n') || null
  run.cases.push({
    id: caseId,
    name: truncate(q.question.trim(), 80),
    query: q.question,
    scope: JSON.stringify({ agentId: sample }),
    now: convEnd === null ? null : convEnd + DAY,
    relevant: JSON.stringify(relevant.map((id) => ({ id, grade: 1 }))),
    tags: JSON.stringify(tags),
    split: splitOf(caseId),
    note,
  })
}

/** Write the eval cases and their answer notes into the workspace in one transaction, with the import's provenance. */
function writeEvalCases(ws: WorkspaceWriter, run: LocomoRun, inputName: string, importedAt: number): void {
  const wsDb = ws.db
  const insCase = wsDb.prepare(
    `INSERT INTO eval_cases (id, name, query, cue, scope, now, relevant, expect_empty, tags, split) VALUES (?, ?, ?, NULL, ?, ?, ?, 0, ?, ?)`,
  )
  const insNote = wsDb.prepare(`INSERT INTO notes (owner_type, owner_id, text, updated_at) VALUES ('eval_case', ?, ?, ?)`)
  const { cases, memories, sessions } = run
  wsDb.transaction(() => {
    for (const k of cases) {
      insCase.run(k.id, k.name, k.query, k.scope, k.now, k.relevant, k.tags, k.split)
      if (k.note) insNote.run(k.id, k.note, importedAt)
    }
    wsDb
      .prepare(`INSERT OR REPLACE INTO meta (key, value) VALUES ('import.source', ?)`)
      .run(JSON.stringify({ importer: 'locomo', input: inputName, at: importedAt, memories, sessions, evalCases: cases.length }))
  })()
}

export const locomoImporter: Importer = {
  name: 'locomo',
  summary: 'LoCoMo conversations JSON: one memory per turn, sessions with summaries, QA items as eval cases',
  defaultEmbed: 'hashing',
  usesModel: false,
  run: importLocomo,
}
