/**
 * Any LanceDB folder (Cognee's `cognee.lancedb`, LangChain / LlamaIndex LanceDB vector stores, an
 * app's own tables), read in place. CrewAI's `memories` table has its own reader (crewai/lance.ts)
 * and is tried first.
 *
 * Every table with a text column becomes memories; the column is found by name, the first string
 * column among TEXT_COLUMNS, else a `payload` column (a struct or JSON text, Cognee's) holding one
 * of those keys. The vector column is the fixed-size float list named `vector` (LanceDB's default),
 * else the first such column.
 *
 * Canonical mapping: `id` (or `_id`, `uuid`, `doc_id`, `node_id`; else the row number) → id,
 * prefixed `<table>/` when several tables are read · the text → content · `user_id` / `agent_id` /
 * `session_id` (or `run_id`, `thread_id`) → scope · `created_at` / `createdAt` / `timestamp`
 * (ISO text or epoch) → created, else the table folder's modification time (marked) · kind
 * 'semantic', tier 'long_term', source 'lancedb' · every other column → metadata
 * `{table, columns}` · the vector → model `lancedb:<table>:<dim>` (LanceDB does not record the
 * model). Tables without a text column are listed in "detected because", not read as memories; any
 * table (a text column of another name) opens by a column mapping through lance/asTables.ts.
 */
import fs from 'node:fs'
import path from 'node:path'
import { RecallscopeError } from '../../../../shared/result'
import { parseJsonSafe } from '../../../safety/json'
import { idText, MemoryDbBuilder, toEpochMs, type Materialized, type Materializer } from '../materialize'
import { lanceAsSqlite } from './asTables'
import { lanceTableNames, readLanceTables, sliceVector, type LanceTable } from './read'

const TEXT_COLUMNS = ['text', 'content', 'document', 'page_content', 'memory', 'data', 'chunk', 'body'] as const
const ID_COLUMNS = ['id', '_id', 'uuid', 'doc_id', 'node_id'] as const
const CREATED_COLUMNS = ['created_at', 'createdAt', 'timestamp', 'created'] as const
const SCOPE = { user: ['user_id', 'userId'], agent: ['agent_id', 'agentId'], session: ['session_id', 'sessionId', 'run_id', 'thread_id'] } as const

type Obj = Record<string, unknown>
const isObj = (v: unknown): v is Obj => !!v && typeof v === 'object' && !Array.isArray(v)

/** The folder itself when it holds `<table>.lance` folders (or is one: its parent). */
function lanceDir(p: string): string | null {
  try {
    if (!fs.statSync(p).isDirectory()) return null
  } catch {
    return null
  }
  if (p.endsWith('.lance')) return path.dirname(p)
  return lanceTableNames(p).length > 0 ? p : null
}

/** Where a row's text is: a column, or a key of the payload column. */
type TextSource = { column: string; key: string | null }

function textSourceOf(t: LanceTable): TextSource | null {
  const stringCols = new Set(t.fields.filter((f) => /^(Utf8|LargeUtf8)$/.test(f.type)).map((f) => f.name))
  for (const c of TEXT_COLUMNS) if (stringCols.has(c)) return { column: c, key: null }
  if (!t.fields.some((f) => f.name === 'payload')) return null
  for (const r of t.rows.slice(0, 50)) {
    const p = payloadOf(r.payload)
    if (p) for (const k of TEXT_COLUMNS) if (typeof p[k] === 'string') return { column: 'payload', key: k }
  }
  return null
}

function payloadOf(v: unknown): Obj | null {
  if (isObj(v)) return v
  if (typeof v === 'string') {
    const j = parseJsonSafe(v)
    return j.ok && isObj(j.value) ? j.value : null
  }
  return null
}

const firstOf = (r: Obj, cols: readonly string[]): unknown => {
  for (const c of cols) if (r[c] !== undefined && r[c] !== null && r[c] !== '') return r[c]
  return undefined
}

function tableMtime(dir: string, table: string): number {
  try {
    return Math.round(fs.statSync(path.join(dir, `${table}.lance`)).mtimeMs)
  } catch {
    return Date.now()
  }
}

function materializeLance(p: string, opts: { nativeBinding?: string } = {}): Materialized {
  const dir = lanceDir(p)
  if (!dir) throw new RecallscopeError('NOT_FOUND', `${p} is not a LanceDB folder (no <table>.lance inside)`)
  const { tables, vectors: buf } = readLanceTables(dir, '*')
  const readable = tables.map((t) => ({ t, src: textSourceOf(t) }))
  const withText = readable.filter((x) => x.src !== null)
  if (withText.length === 0)
    throw new RecallscopeError(
      'UNKNOWN_LAYOUT',
      `${dir} is a LanceDB folder, but none of its tables (${tables.map((t) => t.name).join(', ') || 'none'}) has a text column (${TEXT_COLUMNS.join(', ')}, or a payload with one of them)`,
    )
  const b = new MemoryDbBuilder(opts.nativeBinding)
  const parts: string[] = []
  let offset = 0
  b.batch(() => {
    for (const { t, src } of readable) {
      const start = offset
      offset += t.dims.reduce((a, d) => a + d * 4, 0)
      if (!src) {
        parts.push(`${t.name} (no text column: not read)`)
        continue
      }
      const mtime = tableMtime(dir, t.name)
      let at = start
      let rows = 0
      let vectors = 0
      let noText = 0
      t.rows.forEach((r, i) => {
        const vecAt = at
        at += t.dims[i] * 4
        const payload = src.key ? payloadOf(r.payload) : null
        const content = src.key ? payload?.[src.key] : r[src.column]
        if (typeof content !== 'string') {
          noText++
          return
        }
        const scopeFrom = payload ? { ...payload, ...r } : r
        const rawId = idText(firstOf(scopeFrom, ID_COLUMNS)) ?? String(i + 1)
        const id = withText.length > 1 ? `${t.name}/${rawId}` : rawId
        const created = toEpochMs(firstOf(scopeFrom, CREATED_COLUMNS))
        const columns: Obj = { ...r }
        if (src.key && payload) {
          const rest = { ...payload }
          delete rest[src.key]
          columns.payload = rest
        } else delete columns[src.column]
        b.memory({
          id,
          content,
          user_id: idText(firstOf(scopeFrom, SCOPE.user)),
          agent_id: idText(firstOf(scopeFrom, SCOPE.agent)),
          session_id: idText(firstOf(scopeFrom, SCOPE.session)),
          kind: 'semantic',
          tier: 'long_term',
          source: 'lancedb',
          created_at: created ?? mtime,
          turn: i + 1,
          metadata: JSON.stringify({ table: t.name, columns, ...(created === null ? { created_from_mtime: true } : {}) }),
        })
        rows++
        const v = sliceVector(buf, vecAt, t.dims[i])
        if (v) {
          b.embedding('memory', id, `lancedb:${t.name}:${v.length}`, v)
          vectors++
        }
      })
      const text = src.key ? `payload.${src.key}` : src.column
      parts.push(
        `${t.name} (text ${text}, vector ${t.vectorColumn ?? 'none'}: ${rows} rows, ${vectors} vectors${noText ? `, ${noText} without text skipped` : ''})`,
      )
    }
  })
  return { db: b.done(), layout: 'lancedb', detectedBecause: `LanceDB folder ${dir}: ${parts.join('; ')}`, ftsKey: b.fingerprint() }
}

export const lanceMaterializer: Materializer = {
  name: 'lancedb',
  lookedFor: 'LanceDB: a folder of <table>.lance tables with a text column (and a vector column)',
  sniff: (p) => lanceDir(p) !== null,
  materialize: materializeLance,
  asTables: (p, opts) => {
    const dir = lanceDir(p)
    if (!dir) throw new RecallscopeError('NOT_FOUND', `${p} is not a LanceDB folder (no <table>.lance inside)`)
    return lanceAsSqlite(dir, opts)
  },
}
