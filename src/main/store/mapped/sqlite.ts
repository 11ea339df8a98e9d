/**
 * Any SQLite table as memories, by a column mapping (shared/mapping.ts): the
 * mapping becomes one more SqlLayout, SQL sub-selects with the canonical column
 * names over the user's table, so browse, recall, eval and trace work exactly
 * as on a canonical DB, read-only and in place.
 *
 * Canonical mapping: the mapped columns → id, content, created_at / last_used_at
 * (epoch ms from ISO text, unix s or unix ms), role / kind / tier (lower-cased),
 * session / user / agent ids, salience; tier 'long_term' when no column gives one (a
 * table of memories is what the agent keeps; the default recall scope leaves NULL tiers out); every other non-BLOB column → metadata
 * (a JSON object); sessions are the distinct session ids; vectors from a BLOB
 * (float32), JSON text or sqlite-vec `vec0` column, in the table or a table
 * beside it, under the model the mapping names or `<table>:<dim>`.
 */
import type Database from 'better-sqlite3'
import { RecallscopeError } from '../../../shared/result'
import type { Mapping, MappingPreview, MappingProblem, PreviewRow, TableColumnInfo, TableInfo, TimeUnit, VectorEncoding } from '../../../shared/mapping'
import { cellText, decodeVector } from '../decode'
import type { Adapter, SqlLayout } from '../sqlite/layouts'
import { loadSqliteVec } from '../sqliteVec'

/** Rows sampled to check a mapping and to suggest one. */
const SAMPLE = 200
/** Row counts in the table list stop here (a count over a huge table is not worth the wait). */
const COUNT_CAP = 1_000_000
/** Metadata gets at most this many unmapped columns (SQLite's function-argument limit). */
const MAX_META_COLS = 50
/** Mapped times outside 1970..2200 are flagged: most likely the wrong unit. */
export const PLAUSIBLE_MS: [number, number] = [0, 7_258_118_400_000]

/** A quoted SQLite identifier. */
function qi(name: string): string {
  return `"${name.replace(/"/g, '""')}"`
}

function sqlText(s: string): string {
  return `'${s.replace(/'/g, "''")}'`
}

/** A stable label for unlabelled vectors: `<table>:<dim>` with the table name slugged (models.ts's unlabelled pattern). */
export function defaultModelLabel(table: string, dim: number): string {
  const slug = table
    .toLowerCase()
    .replace(/[^a-z0-9-]+/g, '-')
    .replace(/^-+|-+$/g, '')
  return `${slug || 'mapped'}:${dim}`
}

/** The tables (and views) of a file with their columns, a sample of value types and capped row counts. */
export function listTables(db: Database.Database): TableInfo[] {
  const rows = db.prepare(`SELECT name, type, sql FROM sqlite_master WHERE type IN ('table','view') AND name NOT LIKE 'sqlite_%' ORDER BY name`).all() as {
    name: string
    type: string
    sql: string | null
  }[]
  const virtuals = rows.filter((r) => r.sql && /^\s*CREATE\s+VIRTUAL\s+TABLE/i.test(r.sql)).map((r) => r.name)
  if (rows.some((r) => r.sql && /USING\s+vec0\s*\(/i.test(r.sql))) loadSqliteVec(db)
  const out: TableInfo[] = []
  for (const r of rows) {
    const virtual = virtuals.includes(r.name)
    const kind: TableInfo['kind'] = r.type === 'view' ? 'view' : virtual ? (/USING\s+vec0\s*\(/i.test(r.sql ?? '') ? 'vec0' : 'virtual') : 'table'
    const shadow = !virtual && virtuals.some((v) => r.name.startsWith(`${v}_`))
    let columns: TableColumnInfo[] = []
    let count = 0
    try {
      columns = (db.prepare(`SELECT name, type FROM pragma_table_info(?)`).all(r.name) as { name: string; type: string }[]).map((c) => ({
        name: c.name,
        type: c.type ?? '',
        seen: [],
        constantLength: null,
      }))
      if (kind === 'vec0') for (const c of columns) c.type = vec0ColumnType(r.sql ?? '', c.name) ?? c.type
      if (!shadow) sampleShapes(db, r.name, columns)
      count = db
        .prepare(`SELECT count(*) FROM (SELECT 1 FROM ${qi(r.name)} LIMIT ${COUNT_CAP + 1})`)
        .pluck()
        .get() as number
    } catch {
      /* a table that cannot be read (a virtual table whose module is missing) is listed without details */
    }
    out.push({ name: r.name, kind, columns, rows: Math.min(count, COUNT_CAP), rowsCapped: count > COUNT_CAP, shadow })
  }
  return out
}

/** `embedding float[384]` from a vec0 table's DDL (PRAGMA table_info gives no type for it). */
function vec0ColumnType(ddl: string, column: string): string | null {
  const m = new RegExp(`\\b${column.replace(/[^A-Za-z0-9_]/g, '')}\\s+((?:float|int8|bit)\\s*\\[\\s*\\d+\\s*\\])`, 'i').exec(ddl)
  return m ? m[1] : null
}

/** Fill each column's storage classes seen and constant BLOB / JSON-array length, from the first rows. */
function sampleShapes(db: Database.Database, table: string, columns: TableColumnInfo[]): void {
  const sample = sampleRows(db, table, 50)
  for (const c of columns) {
    const seen = new Set<string>()
    const lens = new Set<number>()
    let lenOk = true
    for (const row of sample) {
      const v = row[c.name]
      seen.add(storageClass(v))
      if (v === null || v === undefined) continue
      const n = Buffer.isBuffer(v) ? v.length : jsonArrayLength(v)
      if (n === null) lenOk = false
      else lens.add(n)
    }
    c.seen = [...seen]
    c.constantLength = lenOk && lens.size === 1 ? [...lens][0] : null
  }
}

function storageClass(v: unknown): string {
  if (v === null || v === undefined) return 'null'
  if (Buffer.isBuffer(v)) return 'blob'
  if (typeof v === 'string') return 'text'
  if (typeof v === 'bigint' || (typeof v === 'number' && Number.isInteger(v))) return 'integer'
  return 'real'
}

/** Length of a JSON text array of numbers, else null. */
function jsonArrayLength(v: unknown): number | null {
  if (typeof v !== 'string' || !v.trimStart().startsWith('[')) return null
  try {
    const a = JSON.parse(v) as unknown
    return Array.isArray(a) && a.length > 0 && a.every((x) => typeof x === 'number') ? a.length : null
  } catch {
    return null
  }
}

/** The first rows of a table, raw. */
function sampleRows(db: Database.Database, table: string, n = SAMPLE): Record<string, unknown>[] {
  return db.prepare(`SELECT * FROM ${qi(table)} LIMIT ${n}`).all() as Record<string, unknown>[]
}

/** Column → sampled values, for suggestMapping. */
export function sampleColumns(db: Database.Database, table: string): Record<string, unknown[]> {
  const out: Record<string, unknown[]> = {}
  for (const row of sampleRows(db, table, 50)) for (const [k, v] of Object.entries(row)) (out[k] ??= []).push(v)
  return out
}

// --- SQL expressions ---------------------------------------------------------

const NUMERIC_TEXT = (x: string) => `(typeof(${x}) = 'text' AND trim(${x}) <> '' AND trim(${x}) NOT GLOB '*[^0-9.+-]*')`

/** Epoch ms from a time column, per the mapping's unit (guessed per value when absent); NULL when unreadable. */
function timeExpr(x: string, unit: TimeUnit | undefined): string {
  const iso = `CAST(round((julianday(${x}) - 2440587.5) * 86400000.0) AS INTEGER)`
  const num = (scale: string) => `CAST(round(CAST(${x} AS REAL) * ${scale}) AS INTEGER)`
  const isNum = `(typeof(${x}) IN ('integer', 'real') OR ${NUMERIC_TEXT(x)})`
  if (unit === 'iso') return `(CASE WHEN typeof(${x}) = 'text' AND NOT ${NUMERIC_TEXT(x)} THEN ${iso} END)`
  if (unit === 'unix_s') return `(CASE WHEN ${isNum} THEN ${num('1000')} END)`
  if (unit === 'unix_ms') return `(CASE WHEN ${isNum} THEN ${num('1')} END)`
  return `(CASE WHEN ${isNum} THEN (CASE WHEN abs(CAST(${x} AS REAL)) < 1e11 THEN ${num('1000')} ELSE ${num('1')} END)
    WHEN typeof(${x}) = 'text' THEN ${iso} END)`
}

const textExpr = (x: string) => `(CASE WHEN typeof(${x}) = 'blob' THEN NULL ELSE CAST(${x} AS TEXT) END)`
const lowerExpr = (x: string) => `nullif(lower(trim(${textExpr(x)})), '')`
const numExpr = (x: string) => `(CASE WHEN typeof(${x}) IN ('integer', 'real') THEN ${x} WHEN ${NUMERIC_TEXT(x)} THEN CAST(${x} AS REAL) END)`

interface Resolved {
  table: TableInfo
  /** canonical field → actual column name (case as declared) */
  cols: Partial<Record<keyof Mapping['columns'], string>>
  rid: string
  vector: { table: TableInfo; column: string; key: string; ref: string; joined: boolean } | null
}

/**
 * Names resolved against the file (SQLite names are case-insensitive), or the problems:
 * a missing table or column, a table with no integer row key.
 */
function resolve(tables: TableInfo[], m: Mapping): { ok: true; r: Resolved } | { ok: false; problems: MappingProblem[] } {
  const problems: MappingProblem[] = []
  const find = (name: string) => tables.find((t) => t.name === name) ?? tables.find((t) => t.name.toLowerCase() === name.toLowerCase())
  const table = find(m.table)
  if (!table)
    return {
      ok: false,
      problems: [
        {
          field: 'table',
          column: m.table,
          message: `no table "${m.table}" (tables: ${
            tables
              .filter((t) => !t.shadow)
              .map((t) => t.name)
              .join(', ') || 'none'
          })`,
        },
      ],
    }
  const colIn = (t: TableInfo, name: string) => t.columns.find((c) => c.name === name) ?? t.columns.find((c) => c.name.toLowerCase() === name.toLowerCase())
  const missing = (field: string, t: TableInfo, name: string) =>
    problems.push({ field, column: name, message: `${field}: no column "${name}" in table "${t.name}" (columns: ${t.columns.map((c) => c.name).join(', ')})` })
  const cols: Resolved['cols'] = {}
  for (const [field, name] of Object.entries(m.columns) as [keyof Mapping['columns'], string | undefined][]) {
    if (name === undefined) continue
    if (field === 'content' && name === '') {
      problems.push({ field, column: '', message: 'content: pick the column that holds the memory text' })
      continue
    }
    const c = colIn(table, name)
    if (!c) missing(field, table, name)
    else cols[field] = c.name
  }
  // The row key (_rid): the rowid, or an integer id column for a view or WITHOUT ROWID table.
  let rid = 't.rowid'
  if (table.kind === 'view' || !hasRowid(table)) {
    const idCol = cols.id ? table.columns.find((c) => c.name === cols.id) : undefined
    if (idCol && idCol.seen.every((s) => s === 'integer' || s === 'null')) rid = `t.${qi(idCol.name)}`
    else
      problems.push({
        field: 'id',
        column: cols.id ?? m.table,
        message: `${table.kind === 'view' ? 'view' : 'table'} "${table.name}" has no rowid: map id to an integer column that identifies each row`,
      })
  }
  let vector: Resolved['vector'] = null
  if (m.vector) {
    const vt = m.vector.table ? find(m.vector.table) : table
    if (!vt) problems.push({ field: 'vector', column: m.vector.table!, message: `vector: no table "${m.vector.table}"` })
    else {
      const vc = colIn(vt, m.vector.column)
      const joined = vt !== table
      const key = m.vector.key ? colIn(vt, m.vector.key)?.name : 'rowid'
      const ref = m.vector.ref ? colIn(table, m.vector.ref)?.name : 'rowid'
      if (!vc) missing('vector', vt, m.vector.column)
      if (m.vector.key && !key) missing('vector.key', vt, m.vector.key)
      if (m.vector.ref && !ref) missing('vector.ref', table, m.vector.ref)
      if (m.vector.encoding === 'pgvector')
        problems.push({ field: 'vector', column: m.vector.column, message: 'vector: encoding "pgvector" is for Postgres tables; use f32, json or vec0' })
      if (m.vector.encoding === 'vec0' && vt.kind !== 'vec0')
        problems.push({ field: 'vector', column: m.vector.column, message: `vector: "${vt.name}" is not a sqlite-vec vec0 table (encoding vec0)` })
      if (vc && key && ref) vector = { table: vt, column: vc.name, key, ref, joined }
    }
  }
  if (problems.length) return { ok: false, problems }
  return { ok: true, r: { table, cols, rid, vector } }
}

function hasRowid(t: TableInfo): boolean {
  return t.kind === 'table' || t.kind === 'vec0' || t.kind === 'virtual'
}

/** The SqlLayout sub-selects of a resolved mapping. */
function layoutSql(m: Mapping, r: Resolved): Pick<SqlLayout, 'memories' | 'memoriesLite' | 'sessions' | 'embeddings'> {
  const c = (f: keyof Mapping['columns']) => (r.cols[f] ? `t.${qi(r.cols[f])}` : null)
  const T = qi(r.table.name)
  const id = c('id') ? `coalesce(${textExpr(c('id')!)}, 'row-' || ${r.rid})` : `CAST(${r.rid} AS TEXT)`
  const mapped = new Set(Object.values(r.cols))
  if (r.vector && !r.vector.joined) mapped.add(r.vector.column)
  const rest = r.table.columns.filter((x) => !mapped.has(x.name) && !x.seen.includes('blob')).slice(0, MAX_META_COLS)
  const metadata = rest.length ? `json_object(${rest.map((x) => `${sqlText(x.name)}, ${textOrNum(`t.${qi(x.name)}`)}`).join(', ')})` : 'NULL'
  const memories = `SELECT ${r.rid} AS _rid, ${id} AS id, ${c('agent') ? textExpr(c('agent')!) : 'NULL'} AS agent_id,
      ${c('user') ? textExpr(c('user')!) : 'NULL'} AS user_id, ${c('session') ? textExpr(c('session')!) : 'NULL'} AS session_id,
      ${c('role') ? lowerExpr(c('role')!) : 'NULL'} AS role, ${c('kind') ? lowerExpr(c('kind')!) : 'NULL'} AS kind,
      ${c('tier') ? lowerExpr(c('tier')!) : `'long_term'`} AS tier, coalesce(${textExpr(c('content')!)}, '') AS content, NULL AS summary,
      ${c('salience') ? numExpr(c('salience')!) : 'NULL'} AS salience, ${c('created') ? timeExpr(c('created')!, m.timeUnit) : 'NULL'} AS created_at,
      ${c('lastUsed') ? timeExpr(c('lastUsed')!, m.timeUnit) : 'NULL'} AS last_used_at, NULL AS use_count, NULL AS turn,
      'mapped' AS source, ${metadata} AS metadata, NULL AS tenant_id
    FROM ${T} t`
  const sessions = c('session')
    ? `SELECT min(x._rid) AS _rid, x.session_id AS id, min(x.agent_id) AS agent_id, min(x.user_id) AS user_id, NULL AS tenant_id,
         min(x.created_at) AS started_at, max(x.created_at) AS ended_at, NULL AS summary, 0 AS is_archived
       FROM (${memories}) x WHERE x.session_id IS NOT NULL GROUP BY x.session_id`
    : `SELECT NULL AS _rid, NULL AS id, NULL AS agent_id, NULL AS user_id, NULL AS tenant_id, NULL AS started_at,
         NULL AS ended_at, NULL AS summary, 0 AS is_archived WHERE 0`
  let embeddings: string | null = null
  if (r.vector) {
    const v = r.vector
    const ref = v.ref === 'rowid' ? 't.rowid' : `t.${qi(v.ref)}`
    const key = v.key === 'rowid' ? 'v.rowid' : `v.${qi(v.key)}`
    embeddings = v.joined
      ? // The vector table outside: a vec0 scan, each row finding its memory by the (indexed) rowid.
        `SELECT ${r.rid} AS _rid, 'memory' AS owner_type, ${id} AS owner_id, NULL AS model, NULL AS dim, v.${qi(v.column)} AS vector
         FROM ${qi(v.table.name)} v JOIN ${T} t ON ${ref} = ${key} WHERE v.${qi(v.column)} IS NOT NULL`
      : `SELECT ${r.rid} AS _rid, 'memory' AS owner_type, ${id} AS owner_id, NULL AS model, NULL AS dim, t.${qi(v.column)} AS vector
         FROM ${T} t WHERE t.${qi(v.column)} IS NOT NULL`
  }
  return { memories, memoriesLite: memories, sessions, embeddings }
}

/** A value json_object() accepts: numbers stay numbers, BLOBs are left out. */
function textOrNum(x: string): string {
  return `(CASE typeof(${x}) WHEN 'blob' THEN NULL ELSE ${x} END)`
}

// --- checking ------------------------------------------------------------------

interface Checked {
  problems: MappingProblem[]
  resolved: Resolved | null
  /** the vectors' length and model label (sampled), when mapped and readable */
  vector: { dim: number; model: string } | null
}

/** Share of the sampled vectors that must have one length for the column to be read as one model's vectors. */
const MAJORITY_SHARE = 0.9

/** A vector value per the mapping's encoding: its length, or what is wrong with it. */
function vectorLength(v: unknown, encoding: VectorEncoding): number | string {
  if (encoding === 'json') {
    if (Buffer.isBuffer(v)) return 'holds BLOBs, not JSON text (encoding f32?)'
    const n = jsonArrayLength(v)
    return n === null ? 'not a JSON array of numbers' : n
  }
  if (!Buffer.isBuffer(v))
    return typeof v === 'string' ? 'holds text, not float32 BLOBs (encoding json?)' : `holds ${storageClass(v)} values, not float32 BLOBs`
  if (v.length % 4 !== 0) return `length ${v.length} bytes is not a multiple of 4 (float32)`
  const d = decodeVector(v, null)
  return typeof d === 'string' ? d : d.length
}

/**
 * Every problem with a mapping against a file: names first (missing table or column), then
 * a sample of the first rows (content that is BLOBs, times that cannot be read in the unit,
 * non-numeric salience, vectors of the wrong encoding, a length not a multiple of 4 or
 * lengths that disagree). An empty list means the mapping opens.
 */
function checkMapping(db: Database.Database, m: Mapping, tables = listTables(db)): Checked {
  const res = resolve(tables, m)
  if (!res.ok) return { problems: res.problems, resolved: null, vector: null }
  const r = res.r
  const problems: MappingProblem[] = []
  let rows: Record<string, unknown>[]
  try {
    rows = db.prepare(`SELECT * FROM ${qi(r.table.name)} LIMIT ${SAMPLE}`).all() as Record<string, unknown>[]
  } catch (e) {
    return {
      problems: [{ field: 'table', column: r.table.name, message: `cannot read "${r.table.name}": ${(e as Error).message}` }],
      resolved: null,
      vector: null,
    }
  }
  const values = (col: string) => rows.map((x) => x[col]).filter((v) => v !== null && v !== undefined)
  const content = r.cols.content!
  const cv = values(content)
  if (cv.length > 0 && cv.every((v) => Buffer.isBuffer(v)))
    problems.push({ field: 'content', column: content, message: `content: column "${content}" holds BLOBs, not text` })
  for (const f of ['created', 'lastUsed'] as const) {
    const col = r.cols[f]
    if (!col) continue
    const vs = values(col)
    const bad = vs.filter((v) => timeProblem(v, m.timeUnit) !== null)
    if (vs.length > 0 && bad.length * 2 >= vs.length)
      problems.push({
        field: f,
        column: col,
        message: `${f}: ${bad.length} of ${vs.length} sampled values of "${col}" ${timeProblem(bad[0], m.timeUnit)}`,
      })
  }
  if (r.cols.salience) {
    const vs = values(r.cols.salience)
    if (vs.length > 0 && vs.every((v) => toNumber(v) === null))
      problems.push({ field: 'salience', column: r.cols.salience, message: `salience: column "${r.cols.salience}" holds no numbers` })
  }
  if (r.cols.id) {
    const ids = values(r.cols.id).map(String)
    const dup = ids.find((v, i) => ids.indexOf(v) !== i)
    if (dup !== undefined) problems.push({ field: 'id', column: r.cols.id, message: `id: column "${r.cols.id}" is not unique ("${dup.slice(0, 40)}" twice)` })
  }
  let vector: Checked['vector'] = null
  if (r.vector && m.vector) {
    const v = r.vector
    let vs: unknown[]
    try {
      vs = db
        .prepare(`SELECT ${qi(v.column)} FROM ${qi(v.table.name)} WHERE ${qi(v.column)} IS NOT NULL LIMIT ${SAMPLE}`)
        .pluck()
        .all()
    } catch (e) {
      vs = []
      problems.push({ field: 'vector', column: v.column, message: `vector: cannot read "${v.table.name}.${v.column}": ${(e as Error).message}` })
    }
    const lens = new Map<number, number>()
    let firstBad: string | null = null
    for (const x of vs) {
      const n = vectorLength(x, m.vector.encoding)
      // A NaN in one row is that row's problem (skipped and counted at load), not the mapping's.
      if (n === 'nonFiniteVector') continue
      if (typeof n === 'string') firstBad ??= n
      else lens.set(n, (lens.get(n) ?? 0) + 1)
    }
    // One length for nearly every row: the odd ones are rows with a wrong dimension (skipped and counted
    // at load, as in any store); no clear majority means the column is not one model's vectors.
    const major = [...lens].sort((x, y) => y[1] - x[1])[0]
    const clear = major !== undefined && major[1] >= MAJORITY_SHARE * [...lens.values()].reduce((n, c) => n + c, 0)
    if (firstBad) problems.push({ field: 'vector', column: v.column, message: `vector: column "${v.column}" ${firstBad}` })
    else if (lens.size > 1 && !clear)
      problems.push({
        field: 'vector',
        column: v.column,
        message: `vector: column "${v.column}" has vectors of different lengths (${[...lens]
          .sort((a, b) => b[1] - a[1])
          .map(([d, n]) => `${d}-d × ${n}`)
          .join(', ')} in the first ${vs.length})`,
      })
    else if (major) {
      const dim = major[0]
      vector = { dim, model: m.vector.model ?? defaultModelLabel(r.table.name, dim) }
    }
  }
  return { problems, resolved: r, vector }
}

function toNumber(v: unknown): number | null {
  if (typeof v === 'number') return Number.isFinite(v) ? v : null
  if (typeof v === 'bigint') return Number(v)
  if (typeof v === 'string' && /^\s*[+-]?\d+(\.\d+)?([eE][+-]?\d+)?\s*$/.test(v)) return Number(v)
  return null
}

/** Epoch ms of a time value per the unit (the same rules as timeExpr), or null. */
function timeMs(v: unknown, unit: TimeUnit | undefined): number | null {
  const n = toNumber(v)
  if (unit === 'iso') return n === null && typeof v === 'string' ? isoMs(v) : null
  if (n !== null) return unit === 'unix_s' || (unit === undefined && Math.abs(n) < 1e11) ? Math.round(n * 1000) : Math.round(n)
  return unit === undefined && typeof v === 'string' ? isoMs(v) : null
}

function isoMs(s: string): number | null {
  const t = Date.parse(/^\d{4}-\d\d-\d\d \d/.test(s) && !/[zZ]|[+-]\d\d:?\d\d$/.test(s) ? `${s.replace(' ', 'T')}Z` : s)
  return Number.isNaN(t) ? null : t
}

/** Why a time value does not read in the unit (null when it does and lands in 1970..2200). */
function timeProblem(v: unknown, unit: TimeUnit | undefined): string | null {
  const ms = timeMs(v, unit)
  const shown = Buffer.isBuffer(v) ? 'a BLOB' : JSON.stringify(typeof v === 'bigint' ? Number(v) : v)?.slice(0, 40)
  if (ms === null) return `cannot be read as ${unit ?? 'a time'} (e.g. ${shown})`
  if (ms < PLAUSIBLE_MS[0] || ms > PLAUSIBLE_MS[1]) return `fall outside 1970–2200 as ${unit ?? 'a time'} (e.g. ${shown}): is the unit right?`
  return null
}

/** Throw the problems of a mapping as one BAD_INPUT naming each field and column. */
function assertNoProblems(problems: MappingProblem[], label: string): void {
  if (problems.length === 0) return
  throw new RecallscopeError('BAD_INPUT', `The mapping for ${label} does not fit: ${problems.map((p) => p.message).join('; ')}`, { problems })
}

/**
 * A layout adapter for a mapping: `detect` checks the mapping against the file and
 * throws BAD_INPUT (details.problems, each naming its column) when it does not fit.
 */
export function mappedAdapter(m: Mapping, label: string): Adapter {
  return {
    name: 'mapped',
    lookedFor: `the mapping (table ${m.table})`,
    detect(db) {
      const c = checkMapping(db, m)
      assertNoProblems(c.problems, label)
      const r = c.resolved!
      const sql = layoutSql(m, r)
      const needsVec = r.vector?.table.kind === 'vec0' || r.table.kind === 'vec0'
      if (needsVec) loadSqliteVec(db)
      const found = Object.entries(r.cols)
        .map(([f, col]) => `${col} → ${f}`)
        .join(', ')
      return {
        layout: 'mapped',
        detectedBecause: `mapping of table ${r.table.name}: ${found}${r.vector ? `, ${r.vector.table.name}.${r.vector.column} → vector (${m.vector!.encoding}${c.vector ? `, ${c.vector.model}` : ''})` : ''}${m.timeUnit ? `, times as ${m.timeUnit}` : ''}`,
        ...sql,
        recallEvents: null,
        agentFts: null,
        defaultModel: c.vector?.model ?? (m.vector ? (m.vector.model ?? defaultModelLabel(r.table.name, 0)) : null),
        ...(needsVec ? { needsSqliteVec: true } : {}),
        // The mapping decides what every row reads as: a new mapping must rebuild the workspace FTS index.
        ftsKey: JSON.stringify(m),
      }
    },
  }
}

/** 20 rows read through the mapping, each with its per-field problems, and the mapping's own problems. */
export function previewMapping(db: Database.Database, m: Mapping, limit = 20): MappingPreview {
  const c = checkMapping(db, m)
  if (!c.resolved) return { rows: [], problems: c.problems, vector: null }
  const r = c.resolved
  const sql = layoutSql(m, r)
  const mapped = db.prepare(`SELECT * FROM (${sql.memories}) LIMIT ${limit}`).all() as Record<string, unknown>[]
  const raw = new Map<unknown, Record<string, unknown>>()
  for (const row of db.prepare(`SELECT ${r.rid} AS __rid, t.* FROM ${qi(r.table.name)} t LIMIT ${limit}`).all() as Record<string, unknown>[])
    raw.set(row.__rid, row)
  const vecs = new Map<string, unknown>()
  if (sql.embeddings && mapped.length) {
    // By row key: the sub-select's WHERE on _rid reaches the table's rowid (a lookup, not a scan of every vector).
    const rids = mapped.map((x) => x._rid)
    const st = db.prepare(`SELECT owner_id, vector FROM (${sql.embeddings}) WHERE _rid IN (${rids.map(() => '?').join(', ')})`)
    for (const v of st.all(...rids) as { owner_id: string; vector: unknown }[]) vecs.set(v.owner_id, v.vector)
  }
  const rows = mapped.map((x): PreviewRow => {
    const src = raw.get(x._rid) ?? {}
    const errors: PreviewRow['errors'] = {}
    for (const [f, key] of [
      ['created', 'created_at'],
      ['lastUsed', 'last_used_at'],
    ] as const) {
      const col = r.cols[f]
      if (!col || src[col] === null || src[col] === undefined) continue
      const p = timeProblem(src[col], m.timeUnit)
      if (p || x[key] === null) errors[f] = `"${col}" ${p ?? 'cannot be read'}`
    }
    if (r.cols.salience && src[r.cols.salience] !== null && src[r.cols.salience] !== undefined && x.salience === null)
      errors.salience = `"${r.cols.salience}" is not a number`
    for (const [f, allowed] of [
      ['role', ['user', 'assistant', 'system', 'tool']],
      ['kind', ['episodic', 'semantic', 'procedural', 'reflection']],
      ['tier', ['working', 'long_term', 'archived']],
    ] as const) {
      const v = x[f]
      if (typeof v === 'string' && !(allowed as readonly string[]).includes(v)) errors[f] = `"${v}" is not one of ${allowed.join(', ')}: shown as none`
    }
    if (r.cols.content && Buffer.isBuffer(src[r.cols.content])) errors.content = `"${r.cols.content}" is a BLOB`
    let dim: number | null = null
    if (m.vector) {
      const v = vecs.get(String(x.id))
      if (v !== undefined && v !== null) {
        const n = vectorLength(v, m.vector.encoding)
        if (typeof n === 'string') errors.vector = n
        else {
          dim = n
          if (c.vector && n !== c.vector.dim) errors.vector = `${n}-d, the others are ${c.vector.dim}-d`
        }
      }
    }
    const num = (v: unknown) => (typeof v === 'number' ? v : typeof v === 'bigint' ? Number(v) : null)
    const str = (v: unknown) => (v === null || v === undefined ? null : cellText(v))
    return { id: cellText(x.id), content: cellText(x.content), createdAt: num(x.created_at), ...plainPreviewFields(x, str, num), dim, errors }
  })
  return { rows, problems: c.problems, vector: c.vector }
}

/**
 * A preview row's fields read straight from their mapped columns (SQLite and Postgres previews),
 * given how the source turns a cell into text and into a number.
 */
export function plainPreviewFields(x: Record<string, unknown>, str: (v: unknown) => string | null, num: (v: unknown) => number | null) {
  return {
    lastUsedAt: num(x.last_used_at),
    role: str(x.role),
    kind: str(x.kind),
    tier: str(x.tier),
    sessionId: str(x.session_id),
    userId: str(x.user_id),
    agentId: str(x.agent_id),
    salience: num(x.salience),
  }
}
