/**
 * `import jsonl`: one JSON object per line, with the canonical `memories` field
 * names in camelCase or snake_case (docs/internals/design.md "Interfaces"), an optional
 * `embedding: number[]` + `model`, and optional session fields that apply to the
 * line's session (`sessionSummary`, `tenantId`, `sessionArchived`).
 *
 * Every line is judged on its own: blank lines are ignored; a line that is not
 * JSON, has no `content`, or has a field of the wrong type is skipped with its line
 * number. Nothing in the input is fatal except an input with no usable line.
 */
import crypto from 'node:crypto'
import fs from 'node:fs'
import { hashEmbed, HASHING_MODEL } from '../../embed/hashing'
import type { CanonicalMemoryRow, CanonicalWriter } from '../sqlite/canonicalWriter'
import {
  checkPaths,
  DEFAULT_ENGRAM_MODEL,
  makeTicker,
  mergeMetadata,
  parseTime,
  pruneMinorityDims,
  ReportBuilder,
  withOutput,
  type ImportOptions,
  type ImportReport,
  type Importer,
} from './common'
import { KIND_SET, ROLE_SET, TIER_SET } from '../decode'
import { MAX_JSON_DEPTH, parseJsonSafe, valueDepth } from '../../safety/json'
import { openRegularFile } from '../safeFiles'

/**
 * Lines of a file, read in 1 MiB chunks (never the whole file at once). 1-based line numbers;
 * a leading BOM and CR of CRLF are dropped. Lines are split on bytes (0x0A never occurs inside
 * a UTF-8 sequence) and decoded strictly, so a line with invalid UTF-8 is flagged (and its bad
 * bytes shown as U+FFFD) instead of being silently replaced (issue 10).
 */
export function* readLines(file: string): Generator<{ line: number; text: string; invalidUtf8?: boolean }> {
  const fd = openRegularFile(file, 'JSONL file')
  const strict = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true })
  const loose = new TextDecoder('utf-8', { ignoreBOM: true })
  const decode = (b: Buffer, line: number): { line: number; text: string; invalidUtf8?: boolean } => {
    if (line === 1 && b.length >= 3 && b[0] === 0xef && b[1] === 0xbb && b[2] === 0xbf) b = b.subarray(3)
    if (b.length && b[b.length - 1] === 0x0d) b = b.subarray(0, b.length - 1)
    try {
      return { line, text: strict.decode(b) }
    } catch {
      return { line, text: loose.decode(b), invalidUtf8: true }
    }
  }
  try {
    const buf = Buffer.allocUnsafe(1 << 20)
    let rest: Buffer = Buffer.alloc(0)
    let line = 0
    for (;;) {
      const n = fs.readSync(fd, buf, 0, buf.length, null)
      if (n === 0) break
      const s = rest.length ? Buffer.concat([rest, buf.subarray(0, n)]) : Buffer.from(buf.subarray(0, n))
      let start = 0
      for (let i = s.indexOf(0x0a); i !== -1; i = s.indexOf(0x0a, start)) {
        yield decode(s.subarray(start, i), ++line)
        start = i + 1
      }
      rest = s.subarray(start)
    }
    if (rest.length) yield decode(rest, ++line)
  } finally {
    fs.closeSync(fd)
  }
}

/** Canonical column → accepted keys (the snake_case name wins when a line has both). */
const FIELDS: Record<string, [string, string]> = {
  id: ['id', 'id'],
  agent_id: ['agent_id', 'agentId'],
  user_id: ['user_id', 'userId'],
  session_id: ['session_id', 'sessionId'],
  role: ['role', 'role'],
  kind: ['kind', 'kind'],
  tier: ['tier', 'tier'],
  content: ['content', 'content'],
  summary: ['summary', 'summary'],
  salience: ['salience', 'salience'],
  created_at: ['created_at', 'createdAt'],
  last_used_at: ['last_used_at', 'lastUsedAt'],
  use_count: ['use_count', 'useCount'],
  turn: ['turn', 'turn'],
  source: ['source', 'source'],
  metadata: ['metadata', 'metadata'],
  embedding: ['embedding', 'embedding'],
  model: ['model', 'model'],
  tenant_id: ['tenant_id', 'tenantId'],
  session_summary: ['session_summary', 'sessionSummary'],
  session_archived: ['session_archived', 'sessionArchived'],
}
const KNOWN_KEYS = new Set(Object.values(FIELDS).flat())

function get(o: Record<string, unknown>, field: keyof typeof FIELDS): unknown {
  const [snake, camel] = FIELDS[field]
  return o[snake] !== undefined ? o[snake] : o[camel]
}

type LineResult =
  | { skip: string; detail?: string }
  | {
      row: CanonicalMemoryRow
      vector: { model: string | null; values: Float32Array } | { problem: string } | null
      session: { tenant: string | null; summary: string | null; archived: boolean | null }
      repairs: { reason: string; detail?: string }[]
      unknownKeys: string[]
      /** the line had no tier: imported as 'working' */
      defaultedTier: boolean
      /** the line had no createdAt: dated `undatedAt` */
      defaultedCreatedAt: boolean
    }

/** The typed fields of one JSONL object (ids may be numbers; times epoch ms or ISO-8601), or the first wrong type. */
function readTypedFields(r: Record<string, unknown>) {
  const str = (f: keyof typeof FIELDS): string | null | Error => {
    const v = get(r, f)
    if (v === undefined || v === null) return null
    if (typeof v === 'string') return v
    if (typeof v === 'number' && (f === 'id' || f.endsWith('_id'))) return String(v)
    return new Error(`${FIELDS[f][1]} must be a string`)
  }
  const numOf = (f: keyof typeof FIELDS, integer: boolean): number | null | Error => {
    const v = get(r, f)
    if (v === undefined || v === null) return null
    if (typeof v !== 'number' || !Number.isFinite(v) || (integer && !Number.isInteger(v)))
      return new Error(`${FIELDS[f][1]} must be ${integer ? 'an integer' : 'a number'}`)
    return v
  }
  const timeOf = (f: keyof typeof FIELDS): number | null | Error => {
    const v = get(r, f)
    if (v === undefined || v === null) return null
    const t = parseTime(v)
    return t === null || (typeof v !== 'number' && typeof v !== 'string') ? new Error(`${FIELDS[f][1]} must be epoch ms or an ISO-8601 date`) : t
  }
  const fields = {
    id: str('id'),
    agent_id: str('agent_id'),
    user_id: str('user_id'),
    session_id: str('session_id'),
    role: str('role'),
    kind: str('kind'),
    tier: str('tier'),
    summary: str('summary'),
    source: str('source'),
    model: str('model'),
    tenant_id: str('tenant_id'),
    session_summary: str('session_summary'),
    salience: numOf('salience', false),
    use_count: numOf('use_count', true),
    turn: numOf('turn', true),
    created_at: timeOf('created_at'),
    last_used_at: timeOf('last_used_at'),
  }
  for (const v of Object.values(fields)) if (v instanceof Error) return v
  return fields as { [K in keyof typeof fields]: Exclude<(typeof fields)[K], Error> }
}

/** A line's `embedding`: float32 values under the line's model, why it cannot be one, or null when absent. */
function readEmbedding(emb: unknown, model: string | null): { model: string | null; values: Float32Array } | { problem: string } | null {
  if (emb === undefined || emb === null) return null
  if (!Array.isArray(emb) || emb.length === 0) return { problem: 'embedding is not a non-empty array of numbers' }
  const v = new Float32Array(emb.length)
  for (let i = 0; i < emb.length; i++) {
    const x: unknown = emb[i]
    if (typeof x !== 'number') return { problem: x === null ? 'embedding has NaN/null/infinite values' : 'embedding is not a non-empty array of numbers' }
    v[i] = x
  }
  for (let i = 0; i < v.length; i++) if (!Number.isFinite(v[i])) return { problem: 'embedding has NaN/null/infinite values' }
  return { model, values: v }
}

/**
 * One parsed JSON value → a canonical row, or why the line is skipped. Pure.
 * `undatedAt`: the created_at of a line without one (see importJsonl).
 */
function mapJsonlObject(o: unknown, line: number, undatedAt: number): LineResult {
  if (o === null || typeof o !== 'object' || Array.isArray(o)) return { skip: 'not a JSON object' }
  const r = o as Record<string, unknown>
  const content = get(r, 'content')
  if (content === undefined || content === null) return { skip: 'missing content' }
  if (typeof content !== 'string') return { skip: 'wrong type', detail: 'content must be a string' }
  const f = readTypedFields(r)
  if (f instanceof Error) return { skip: 'wrong type', detail: f.message }
  const archivedRaw = get(r, 'session_archived')
  if (archivedRaw !== undefined && archivedRaw !== null && typeof archivedRaw !== 'boolean' && archivedRaw !== 0 && archivedRaw !== 1)
    return { skip: 'wrong type', detail: 'sessionArchived must be a boolean' }

  const repairs: { reason: string; detail?: string }[] = []
  const imp: Record<string, unknown> = {}
  // Enumerations: case-insensitive; values outside the canonical sets keep the
  // memory with the field cleared (the original survives in metadata._import).
  const enumOf = (v: string | null, set: ReadonlySet<string>, name: string): string | null => {
    if (v === null) return null
    const low = v.toLowerCase()
    if (set.has(low)) return low
    repairs.push({ reason: `unknown ${name} (kept, ${name} cleared)`, detail: v })
    imp[name] = v
    return null
  }
  const role = enumOf(f.role, ROLE_SET, 'role')
  const kind = enumOf(f.kind, KIND_SET, 'kind')
  // No tier at all reads as live: 'working' (else no preset's scope would ever reach it; issue 10).
  const tier = f.tier === null ? 'working' : enumOf(f.tier, TIER_SET, 'tier')
  let salience = f.salience
  if (salience !== null && (salience < 0 || salience > 1)) {
    repairs.push({ reason: 'salience outside 0..1 (clamped)', detail: String(salience) })
    imp.salience = salience
    salience = Math.min(1, Math.max(0, salience))
  }
  // No createdAt: dated to when the file was last written (the memory existed by then; a recall
  // "now" must see it, a replay of an event before the file existed must not). Else `before: now`
  // would leave it out of every scope although only `content` is required (issue 10, item 14).
  const defaultedCreatedAt = f.created_at === null
  if (defaultedCreatedAt) imp.createdAt = 'missing: dated to the input file’s last modification'
  let metaRaw = get(r, 'metadata')
  if (metaRaw !== undefined && metaRaw !== null && typeof metaRaw !== 'string') metaRaw = JSON.stringify(metaRaw)
  const meta = mergeMetadata(metaRaw ?? null, Object.keys(imp).length ? { _import: imp } : {})
  if (meta.invalid) repairs.push({ reason: 'metadata is not valid JSON (kept as text under _import.invalidMetadata)' })

  const vector = readEmbedding(get(r, 'embedding'), f.model)
  // No id: derive one from the line number and the text, so re-importing the same file gives the same ids.
  const id = f.id ?? `jsonl-${crypto.createHash('sha1').update(`${line}\n${content}`).digest('hex').slice(0, 16)}`
  const unknownKeys = Object.keys(r).filter((k) => !KNOWN_KEYS.has(k))
  return {
    row: {
      id,
      agent_id: f.agent_id,
      user_id: f.user_id,
      session_id: f.session_id,
      role,
      kind,
      tier,
      content,
      summary: f.summary,
      salience,
      created_at: defaultedCreatedAt ? undatedAt : (f.created_at as number),
      last_used_at: f.last_used_at,
      use_count: f.use_count,
      turn: f.turn,
      source: f.source,
      metadata: meta.text,
    },
    vector,
    session: { tenant: f.tenant_id, summary: f.session_summary, archived: archivedRaw === undefined || archivedRaw === null ? null : Boolean(archivedRaw) },
    repairs,
    unknownKeys,
    defaultedTier: f.tier === null,
    defaultedCreatedAt,
  }
}

interface SessionAcc {
  agent: string | null
  user: string | null
  tenant: string | null
  summary: string | null
  archived: boolean
  min: number | null
  max: number | null
}

/** A line that maps to a memory (mapJsonlObject's non-skip result). */
type MappedLine = Exclude<LineResult, { skip: string }>

/** What the line loop gathers for the sessions, the notes and the written counts. */
interface JsonlTally {
  sessions: Map<string, SessionAcc>
  /** unknown top-level key → number of lines that had it */
  unknownKeys: Map<string, number>
  memories: number
  /** non-blank lines read */
  lines: number
  /** memories dated to the file's mtime (no createdAt) */
  undated: number
  /** memories imported as 'working' (no tier) */
  noTier: number
}

/** What the phases of one import share besides the writer. */
interface JsonlRun {
  input: string
  rb: ReportBuilder
  embed: NonNullable<ImportOptions['embed']>
  defaultModel: string
  undatedAt: number
  tick: (done: number) => Promise<void>
}

/** Import a JSONL file into a new canonical DB at `opts.output`; every skipped or repaired line is in the report. */
export async function importJsonl(opts: ImportOptions): Promise<ImportReport> {
  const t0 = performance.now()
  const { input, output } = checkPaths(opts)
  const rb = new ReportBuilder(opts.maxIssues)
  const st = fs.statSync(input)
  const run: JsonlRun = {
    input,
    rb,
    embed: opts.embed ?? 'none',
    defaultModel: opts.model ?? DEFAULT_ENGRAM_MODEL,
    undatedAt: Math.floor(st.mtimeMs),
    tick: makeTicker(opts, 0),
  }
  const { result, workspace } = await withOutput(
    output,
    opts,
    false,
    async (w) => {
      const tally = await writeJsonlLines(w, run)
      writeJsonlSessions(w, tally.sessions, run.embed)
      // Before the vector pruning's notes: the report lists what happened in input order.
      for (const [k, n] of tally.unknownKeys) rb.notes.push(`unknown field '${k}' ignored on ${n} line${n === 1 ? '' : 's'}`)
      const models = pruneMinorityDims(w.db, rb, (ot, id) => (ot === 'memory' ? { id } : { id, session: id }))
      const embeddings = models.reduce((n, m) => n + m.count, 0)
      noteJsonlTally(rb, tally, run.undatedAt, st.size)
      return { memories: tally.memories, sessions: tally.sessions.size, embeddings, models }
    },
    () => {
      const f = rb.first()
      return `${input} has no importable line (${rb.skipped} skipped${f ? `; line ${f.line}: ${f.reason}` : ''}): expected one JSON object per line with a "content" field`
    },
  )
  return rb.build({
    importer: 'jsonl',
    input,
    output,
    workspace,
    layout: null,
    written: { memories: result.memories, sessions: result.sessions, embeddings: result.embeddings, evalCases: 0 },
    models: result.models,
    tookMs: Math.round(performance.now() - t0),
  })
}

/** Read every line of the input: skip or repair it in the report, write its memory, and tally what the sessions and notes need. */
async function writeJsonlLines(w: CanonicalWriter, run: JsonlRun): Promise<JsonlTally> {
  const { rb } = run
  const exists = w.db.prepare(`SELECT 1 FROM memories WHERE id = ?`).pluck()
  const tally: JsonlTally = { sessions: new Map(), unknownKeys: new Map(), memories: 0, lines: 0, undated: 0, noTier: 0 }
  for (const { line, text, invalidUtf8 } of readLines(run.input)) {
    if (text.trim() === '') continue
    tally.lines++
    if (invalidUtf8) rb.repair('invalid UTF-8 (bad bytes replaced with U+FFFD)', { line })
    // Depth-limited and never quoting the line (safety/json); deep metadata alone is dropped, not the memory.
    const parsed = parseJsonLine(text)
    if (!parsed.ok) {
      rb.skip('bad JSON', { line, detail: parsed.reason })
      await run.tick(tally.lines)
      continue
    }
    const o = parsed.value
    if (parsed.droppedMetadata) rb.repair('metadata nested too deep (dropped)', { line, detail: `deeper than ${MAX_JSON_DEPTH} levels` })
    const m = mapJsonlObject(o, line, run.undatedAt)
    if ('skip' in m) {
      rb.skip(m.skip, { line, ...(m.detail ? { detail: m.detail } : {}) })
    } else if (exists.get(m.row.id)) {
      rb.skip('duplicate id (first kept)', { line, id: m.row.id })
    } else {
      writeJsonlMemory(w, run, tally, m, line)
    }
    await run.tick(tally.lines)
  }
  return tally
}

/** Write one mapped line's memory and its vectors, report its repairs, and fold it into the tally. */
function writeJsonlMemory(w: CanonicalWriter, run: JsonlRun, tally: JsonlTally, m: MappedLine, line: number): void {
  const { rb } = run
  for (const p of m.repairs) rb.repair(p.reason, { line, id: m.row.id, ...(p.detail ? { detail: p.detail } : {}) })
  for (const k of m.unknownKeys) tally.unknownKeys.set(k, (tally.unknownKeys.get(k) ?? 0) + 1)
  if (m.defaultedTier) tally.noTier++
  w.memory(m.row)
  tally.memories++
  if (m.defaultedCreatedAt) tally.undated++
  if (m.vector) {
    if ('problem' in m.vector) rb.skip(m.vector.problem, { line, id: m.row.id })
    else w.embedding('memory', m.row.id, m.vector.model ?? run.defaultModel, m.vector.values)
  }
  if (run.embed === 'hashing') w.embedding('memory', m.row.id, HASHING_MODEL, hashEmbed(m.row.content))
  if (m.row.session_id !== null) foldSession(tally.sessions, m.row.session_id, m)
}

/** Fold a memory into its session: the first non-null value wins for session-level fields; times span the memories. */
function foldSession(sessions: Map<string, SessionAcc>, sid: string, m: MappedLine): void {
  let s = sessions.get(sid)
  if (!s) {
    s = { agent: m.row.agent_id, user: m.row.user_id, tenant: null, summary: null, archived: false, min: null, max: null }
    sessions.set(sid, s)
  }
  s.agent ??= m.row.agent_id
  s.user ??= m.row.user_id
  s.tenant ??= m.session.tenant
  s.summary ??= m.session.summary
  if (m.session.archived) s.archived = true
  const t = m.row.created_at as number | null
  if (t !== null) {
    s.min = s.min === null ? t : Math.min(s.min, t)
    s.max = s.max === null ? t : Math.max(s.max, t)
  }
}

/** Write the sessions the memories named (in first-seen order), with a summary embedding when hashing. */
function writeJsonlSessions(w: CanonicalWriter, sessions: Map<string, SessionAcc>, embed: JsonlRun['embed']): void {
  for (const [id, s] of sessions) {
    w.session({
      id,
      agent_id: s.agent,
      user_id: s.user,
      tenant_id: s.tenant,
      started_at: s.min,
      ended_at: s.max,
      summary: s.summary,
      is_archived: s.archived ? 1 : 0,
    })
    if (embed === 'hashing' && s.summary) w.embedding('session', id, HASHING_MODEL, hashEmbed(s.summary))
  }
}

/** The report's closing notes: the defaults applied (so the user knows why tiers and dates look as they do) and the input size. */
function noteJsonlTally(rb: ReportBuilder, tally: JsonlTally, undatedAt: number, size: number): void {
  const { noTier, undated, lines } = tally
  if (noTier) rb.notes.push(`${noTier} memories have no tier: imported as working (a live tier), so the presets' scopes reach them`)
  if (undated)
    rb.notes.push(
      `${undated} memories have no createdAt: dated ${new Date(undatedAt).toISOString()} (the input file's last change), so recalls from then on see them; metadata._import.createdAt marks them`,
    )
  rb.notes.push(`${lines} non-blank lines read (${size} bytes)`)
}

export const jsonlImporter: Importer = {
  name: 'jsonl',
  summary: 'JSON Lines: one memory per line (canonical field names, camelCase or snake_case), optional embedding + model',
  defaultEmbed: 'none',
  usesModel: true,
  run: importJsonl,
}

/**
 * One JSONL line, parsed. V8 parses very deep nesting, but everything after (stringify,
 * zod, IPC) recurses, so a value deeper than MAX_JSON_DEPTH is refused; when only the
 * metadata is that deep it is dropped (and reported) and the memory kept.
 */
function parseJsonLine(text: string): { ok: true; value: unknown; droppedMetadata: boolean } | { ok: false; reason: string } {
  const strict = parseJsonSafe(text)
  if (strict.ok) return { ok: true, value: strict.value, droppedMetadata: false }
  if (!/nested deeper/.test(strict.reason)) return strict
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch {
    return strict
  }
  if (value && typeof value === 'object' && !Array.isArray(value) && 'metadata' in value) {
    const { metadata: _deep, ...rest } = value as Record<string, unknown>
    if (valueDepth(rest) <= MAX_JSON_DEPTH) return { ok: true, value: { ...rest, metadata: null }, droppedMetadata: true }
  }
  return strict
}
