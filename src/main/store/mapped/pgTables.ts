/**
 * The mapping dialog's questions about a Postgres database that opened as
 * "unknown layout": the tables of its schema (from information_schema), a
 * suggested mapping, a preview through a mapping, the same answers file.ts gives
 * for a SQLite file. They share one read-only session (default_transaction_read_only,
 * a statement timeout), closed when idle; only SELECTs are sent, nothing is written
 * to the server, and a workspace is read only when one already exists.
 */
import fs from 'node:fs'
import path from 'node:path'
import type { Mapping, MappingProblem, MappingPreview, PreviewRow, TableColumnInfo, TableInfo, TablesInfo } from '../../../shared/mapping'
import { RecallscopeError } from '../../../shared/result'
import { PgBridge } from '../postgres/bridge'
import { detectPgLayout, ident, type PgColumn } from '../postgres/layouts'
import { detectLettaPgLayout } from '../postgres/letta'
import { defaultPgWorkspacePath } from '../postgres/source'
import { parsePgUrl, type ParsedPgUrl } from '../postgres/url'
import { readSavedMapping } from '../workspace/workspace'
import { planMappedPg } from './pg'
import { defaultModelLabel, plainPreviewFields, PLAUSIBLE_MS } from './sqlite'
import { suggestMapping } from './suggest'

/** Rows sampled to describe a column, to suggest a mapping and to check one. */
const SAMPLE = 200
/** Row counts in the table list stop here (a count over a huge table is not worth the wait). */
const COUNT_CAP = 100_000
/** Rows the preview shows. */
const PREVIEW_ROWS = 20

export interface PgDialogOptions {
  /** postgres://… (password included when main has one: never shown, scrubbed from errors) */
  url: string
  /** the workspace to look for a saved mapping in. @default the URL's default workspace (under `fallbackDir`) */
  workspacePath?: string
  fallbackDir?: string
  nativeBinding?: string
}

interface Session {
  bridge: PgBridge
  url: ParsedPgUrl
  schema: string
  columns: PgColumn[]
}

/** How long the dialog's session stays open after its last question (each select change asks for a preview). */
const IDLE_MS = 20_000

/**
 * The dialog's one open session: kept between its questions so a preview after a select change costs a
 * query, not a new worker and connection (~0.3 s). One at a time (another URL closes it), closed after
 * IDLE_MS without a question, and dropped after an error that may have left it broken.
 */
let cached: { key: string; bridge: PgBridge; timer: NodeJS.Timeout | null } | null = null

function closeOpen(): void {
  if (!cached) return
  if (cached.timer) clearTimeout(cached.timer)
  cached.bridge.close()
  cached = null
}

function bridgeFor(url: ParsedPgUrl): PgBridge {
  const key = url.connectionString
  if (cached && cached.key !== key) closeOpen()
  if (!cached) {
    const bridge = new PgBridge({
      connectionString: url.connectionString,
      statementTimeoutMs: url.options.statementTimeoutMs ?? 30_000,
      connectTimeoutMs: 10_000,
      max: 1,
      readOnly: true,
      applicationName: 'recallscope',
      secrets: url.secrets,
      label: url.redacted,
    })
    cached = { key, bridge, timer: null }
  }
  if (cached.timer) clearTimeout(cached.timer)
  cached.timer = null
  return cached.bridge
}

/**
 * Run `fn` on the read-only session to the server, with the schema and its columns: the URL's
 * `?schema=`, else `schemaHint` (a mapping's own `schema`, as opening reads it), else current_schema().
 */
function withPg<T>(opts: PgDialogOptions, fn: (s: Session) => T, schemaHint?: string): T {
  const url = parsePgUrl(opts.url)
  const bridge = bridgeFor(url)
  try {
    const { schema } = bridge.query<{ schema: string | null }>(`SELECT coalesce($1::text, current_schema()) AS schema`, [
      url.options.schema ?? schemaHint ?? null,
    ])[0]
    if (!schema) throw new RecallscopeError('BAD_INPUT', `${url.redacted}: no schema (the search_path names none that exists): add ?schema=…`)
    const columns = bridge
      .query<{ t: string; c: string; d: string; u: string }>(
        `SELECT table_name AS t, column_name AS c, data_type AS d, udt_name AS u FROM information_schema.columns WHERE table_schema = $1 ORDER BY table_name, ordinal_position`,
        [schema],
      )
      .map((r): PgColumn => ({ table: r.t, column: r.c, dataType: r.d, udt: r.u }))
    const out = fn({ bridge, url, schema, columns })
    if (cached?.bridge === bridge) (cached.timer = setTimeout(closeOpen, IDLE_MS)).unref()
    return out
  } catch (e) {
    // A lost server, a timeout or a failed login can leave the session unusable: the next question starts afresh.
    if (!(e instanceof RecallscopeError) || ['DB_UNREACHABLE', 'DB_TIMEOUT', 'AUTH_FAILED', 'NO_DB', 'INTERNAL'].includes(e.code)) closeOpen()
    else if (cached?.bridge === bridge) (cached.timer = setTimeout(closeOpen, IDLE_MS)).unref()
    throw e
  }
}

const INTEGER = ['int2', 'int4', 'int8']
const REAL = ['float4', 'float8', 'numeric']
const VECTOR = ['vector', '_float4', '_float8']

/** What a column holds, in the dialog's words (SQLite's storage classes; `vector` for pgvector and real[]). */
function valueClass(udt: string): string {
  if (INTEGER.includes(udt)) return 'integer'
  if (REAL.includes(udt)) return 'real'
  if (udt === 'bytea') return 'blob'
  if (VECTOR.includes(udt)) return 'vector'
  return 'text'
}

/** A vector-ish column's length per row: pgvector dims, array cardinality, bytea bytes. */
function lengthExpr(c: PgColumn): string | null {
  const x = `x.${ident(c.column)}`
  if (c.udt === 'vector') return `vector_dims(${x})`
  if (c.udt === '_float4' || c.udt === '_float8') return `cardinality(${x})`
  if (c.udt === 'bytea') return `octet_length(${x})`
  return null
}

/** Every table and view of the schema with its columns, sampled value classes and lengths, and a capped row count. */
function listPgTables(s: Session): TableInfo[] {
  const kinds = new Map(
    s.bridge
      .query<{ t: string; k: string }>(`SELECT table_name AS t, table_type AS k FROM information_schema.tables WHERE table_schema = $1`, [s.schema])
      .map((r) => [r.t, r.k]),
  )
  const byTable = new Map<string, PgColumn[]>()
  for (const c of s.columns) byTable.set(c.table, [...(byTable.get(c.table) ?? []), c])
  const out: TableInfo[] = []
  for (const [name, cols] of byTable) {
    const T = `${ident(s.schema)}.${ident(name)}`
    const columns: TableColumnInfo[] = cols.map((c) => ({ name: c.column, type: c.udt, seen: [], constantLength: null }))
    let rows = 0
    try {
      rows = Number(s.bridge.query<{ n: string }>(`SELECT count(*) AS n FROM (SELECT 1 FROM ${T} LIMIT ${COUNT_CAP + 1}) c`)[0].n)
      // One pass over the first rows: which columns hold NULLs, and the lengths of vector-ish ones.
      const exprs = cols.flatMap((c, i) => {
        const len = lengthExpr(c)
        return [`bool_or(x.${ident(c.column)} IS NULL) AS n${i}`, ...(len ? [`count(DISTINCT ${len}) AS k${i}`, `min(${len}) AS l${i}`] : [])]
      })
      const agg = s.bridge.query<Record<string, unknown>>(`SELECT ${exprs.join(', ')} FROM (SELECT * FROM ${T} LIMIT ${SAMPLE}) x`)[0] ?? {}
      cols.forEach((c, i) => {
        columns[i].seen = [valueClass(c.udt), ...(agg[`n${i}`] ? ['null'] : [])]
        if (Number(agg[`k${i}`]) === 1) columns[i].constantLength = Number(agg[`l${i}`])
      })
    } catch (e) {
      // A view that fails to run is still listed (its preview says why); a lost server is not hidden.
      if (!(e instanceof RecallscopeError) || ['DB_UNREACHABLE', 'AUTH_FAILED', 'DB_TIMEOUT'].includes(e.code)) throw e
      cols.forEach((c, i) => (columns[i].seen = [valueClass(c.udt)]))
    }
    out.push({
      name,
      kind: kinds.get(name) === 'VIEW' ? 'view' : 'table',
      columns,
      rows: Math.min(rows, COUNT_CAP),
      rowsCapped: rows > COUNT_CAP,
      shadow: false,
    })
  }
  return out
}

/** The layout the schema opens as without a mapping, or null (the mapping is then the way in). */
function detectedLayout(s: Session): string | null {
  try {
    return (detectLettaPgLayout(s.schema, s.columns) ?? detectPgLayout(s.schema, s.columns, s.url.redacted)).layout
  } catch {
    return null
  }
}

/** The mapping saved by an earlier open of this database, or null (no workspace yet, none saved, unreadable). Never creates one. */
function savedPgMapping(url: ParsedPgUrl, opts: PgDialogOptions): Mapping | null {
  const ws = opts.workspacePath ? path.resolve(opts.workspacePath) : defaultPgWorkspacePath(url.identity, opts.fallbackDir)
  return fs.existsSync(ws) ? readSavedMapping(ws, opts.nativeBinding) : null
}

/** A Postgres schema's tables (columns by udt name, sampled shapes, row counts), the layout it opens as (null: none) and its saved mapping. */
export function inspectPgTables(opts: PgDialogOptions): TablesInfo {
  return withPg(opts, (s) => ({
    path: s.url.redacted,
    layout: detectedLayout(s),
    format: 'postgres',
    tables: listPgTables(s),
    saved: savedPgMapping(s.url, opts),
  }))
}

/** A mapping for one table of the schema, pre-filled from column names, types and the first rows' values. */
export function suggestForPg(opts: PgDialogOptions, table: string): Mapping {
  return withPg(opts, (s) => {
    const tables = listPgTables(s)
    const t = tables.find((x) => x.name === table) ?? tables.find((x) => x.name.toLowerCase() === table.toLowerCase())
    if (!t)
      throw new RecallscopeError('NOT_FOUND', `No table "${table}" in schema "${s.schema}" (tables: ${tables.map((x) => x.name).join(', ') || 'none'})`, {
        table,
      })
    // Values as text (int8 and timestamps read the same way the suggestion reads SQLite's); vectors and bytea left out.
    const plain = t.columns.filter((c) => c.type !== 'bytea' && !VECTOR.includes(c.type))
    const samples: Record<string, unknown[]> = Object.fromEntries(plain.map((c) => [c.name, []]))
    if (plain.length) {
      const rows = s.bridge.query<unknown[]>(
        `SELECT ${plain.map((c) => `x.${ident(c.name)}::text`).join(', ')} FROM ${ident(s.schema)}.${ident(t.name)} x LIMIT ${SAMPLE}`,
        [],
        { rowMode: 'array' },
      )
      for (const r of rows) plain.forEach((c, i) => r[i] !== null && samples[c.name].push(r[i]))
    }
    return suggestMapping(tables, t.name, samples)
  })
}

const ALLOWED = {
  role: ['user', 'assistant', 'system', 'tool'],
  kind: ['episodic', 'semantic', 'procedural', 'reflection'],
  tier: ['working', 'long_term', 'archived'],
} as const

const plausible = (ms: number) => ms >= PLAUSIBLE_MS[0] && ms <= PLAUSIBLE_MS[1]

/**
 * The first 20 rows read through a mapping, each with per-field problems, and the mapping's own
 * problems: missing columns and wrong types (from information_schema, as opening checks them),
 * then a sample of the first 200 rows: times that do not read or land outside 1970–2200 in half
 * of it or more, an id that repeats, vectors of different lengths or a bytea not float32.
 */
export function previewPg(opts: PgDialogOptions, m: Mapping): MappingPreview {
  return withPg(opts, (s) => previewPgSession(s, m), m.schema)
}

/** previewPg on an open session: the plan, the sample, its problems and the first rows. */
function previewPgSession(s: Session, m: Mapping): MappingPreview {
  let plan
  try {
    plan = planMappedPg(s.schema, s.columns, m, s.url.redacted)
  } catch (e) {
    const problems = (e as RecallscopeError).details as { problems?: MappingProblem[] } | undefined
    if (e instanceof RecallscopeError && e.code === 'BAD_INPUT' && problems?.problems) return { rows: [], problems: problems.problems, vector: null }
    throw e
  }
  const extra = [
    `${plan.dim ?? 'NULL::int'} AS __dim`,
    ...(['created', 'lastUsed'] as const).flatMap((f) =>
      m.columns[f] ? [`x.${ident(m.columns[f])}::text AS __raw_${f}`, `${plan.timeMs[f]} AS __ms_${f}`] : [],
    ),
  ].join(', ')
  let rows: Record<string, unknown>[]
  try {
    rows = s.bridge.query(`${plan.memoriesOver(`(SELECT x0.ctid AS ctid, x0.* FROM ${plan.table} x0 LIMIT ${SAMPLE})`, extra)}`)
  } catch (e) {
    // Text that is not a time makes the server refuse the cast: a problem of the time column, not a failure.
    const timeCols = (['created', 'lastUsed'] as const).filter((f) => m.columns[f])
    const sqlstate = (e as RecallscopeError).details as { sqlstate?: string } | undefined
    if (!(e instanceof RecallscopeError) || !/^22/.test(sqlstate?.sqlstate ?? '') || timeCols.length === 0) throw e
    const why = e.message.replace(/^.*?: /, '')
    return {
      rows: [],
      problems: timeCols.map((f) => ({ field: f, column: m.columns[f]!, message: `${f}: "${m.columns[f]}" holds values that are not a time (${why})` })),
      vector: null,
    }
  }
  const problems = sampleProblems(rows, m)
  const { vector, dimAll } = sampleVector(rows, m, problems)
  const preview = rows.slice(0, PREVIEW_ROWS).map((x) => previewRowOf(x, m, dimAll))
  return { rows: preview, problems, vector }
}

/** The sample's time problems (half or more of a column's values unreadable or implausible) and a repeated id. */
function sampleProblems(rows: Record<string, unknown>[], m: Mapping): MappingProblem[] {
  const problems: MappingProblem[] = []
  for (const f of ['created', 'lastUsed'] as const) {
    const col = m.columns[f]
    if (!col) continue
    const vs = rows.filter((r) => r[`__raw_${f}`] !== null)
    const bad = vs.filter((r) => r[`__ms_${f}`] === null || !plausible(Number(r[`__ms_${f}`])))
    if (vs.length > 0 && bad.length * 2 >= vs.length)
      problems.push({
        field: f,
        column: col,
        message: `${f}: ${bad.length} of ${vs.length} sampled values of "${col}" fall outside 1970–2200 or do not read as ${m.timeUnit ?? 'a time'} (e.g. ${JSON.stringify(String(bad[0][`__raw_${f}`]).slice(0, 40))}): is the unit right?`,
      })
  }
  if (m.columns.id) {
    const seen = new Set<string>()
    const dup = rows.map((r) => String(r.id)).find((id) => (seen.has(id) ? true : (seen.add(id), false)))
    if (dup !== undefined)
      problems.push({ field: 'id', column: m.columns.id, message: `id: column "${m.columns.id}" is not unique ("${dup.slice(0, 40)}" twice)` })
  }
  return problems
}

/** The sample's vector length when every row agrees (else a problem pushed onto `problems`). */
function sampleVector(rows: Record<string, unknown>[], m: Mapping, problems: MappingProblem[]): { vector: MappingPreview['vector']; dimAll: number | null } {
  if (!m.vector) return { vector: null, dimAll: null }
  const dims = rows
    .map((r) => r.__dim)
    .filter((d): d is number => d !== null && d !== undefined)
    .map(Number)
  const lens = new Map<number, number>()
  for (const d of dims) lens.set(d, (lens.get(d) ?? 0) + 1)
  if (lens.has(-1))
    problems.push({
      field: 'vector',
      column: m.vector.column,
      message: `vector: column "${m.vector.column}" holds bytea whose length is not a multiple of 4 (float32)`,
    })
  else if (lens.size > 1)
    problems.push({
      field: 'vector',
      column: m.vector.column,
      message: `vector: column "${m.vector.column}" has vectors of different lengths (${[...lens]
        .sort((a, b) => b[1] - a[1])
        .map(([d, n]) => `${d}-d × ${n}`)
        .join(', ')} in the first ${dims.length})`,
    })
  else if (lens.size === 1) {
    const dimAll = [...lens.keys()][0]
    return { vector: { dim: dimAll, model: m.vector.model ?? defaultModelLabel(m.table, dimAll) }, dimAll }
  }
  return { vector: null, dimAll: null }
}

/** One previewed row with its per-field problems. Every text field is cast to text in the SQL: strings or NULL come back. */
function previewRowOf(x: Record<string, unknown>, m: Mapping, dimAll: number | null): PreviewRow {
  const str = (v: unknown) => (v === null || v === undefined ? null : typeof v === 'string' ? v : JSON.stringify(v))
  const num = (v: unknown) => (v === null || v === undefined ? null : Number(v))
  const errors: PreviewRow['errors'] = {}
  for (const f of ['created', 'lastUsed'] as const) {
    if (!m.columns[f] || x[`__raw_${f}`] === null) continue
    const ms = x[`__ms_${f}`]
    if (ms === null) errors[f] = `"${m.columns[f]}" cannot be read as ${m.timeUnit ?? 'a time'}`
    else if (!plausible(Number(ms))) errors[f] = `"${m.columns[f]}" falls outside 1970–2200 as ${m.timeUnit ?? 'a time'}: is the unit right?`
  }
  for (const f of ['role', 'kind', 'tier'] as const) {
    const v = x[f]
    if (typeof v === 'string' && !(ALLOWED[f] as readonly string[]).includes(v)) errors[f] = `"${v}" is not one of ${ALLOWED[f].join(', ')}: shown as none`
  }
  const d = num(x.__dim)
  if (d === -1) errors.vector = 'bytea length is not a multiple of 4 (float32)'
  else if (d !== null && dimAll !== null && d !== dimAll) errors.vector = `${d}-d, the others are ${dimAll}-d`
  return {
    id: str(x.id) ?? '',
    content: str(x.content) ?? '',
    createdAt: m.columns.created ? num(x[`__ms_created`]) : null,
    ...plainPreviewFields(x, str, num),
    dim: d === -1 ? null : d,
    errors,
  }
}

/** Throw the preview's problems as one BAD_INPUT naming each field and column (what opening by the dialog checks first). */
export function assertPgMappingFits(opts: PgDialogOptions, m: Mapping): void {
  const { problems } = previewPg(opts, m)
  if (problems.length)
    throw new RecallscopeError('BAD_INPUT', `The mapping for ${parsePgUrl(opts.url).redacted} does not fit: ${problems.map((p) => p.message).join('; ')}`, {
      problems,
    })
}
