/**
 * Suggested mappings: which column is most likely the memory text, its time, its
 * vector… from column names first, then declared types and sampled values. Pure:
 * the SQLite and Postgres sides both hand it a TableInfo and a sample of values.
 */
import type { Mapping, MappedField, TableColumnInfo, TableInfo, TimeUnit } from '../../../shared/mapping'

/** Names each field is recognised by, best first (matched case-insensitively, whole name). */
const NAMES: Record<MappedField, string[]> = {
  id: ['id', 'memory_id', 'note_id', 'uuid', 'key', 'pk', '_id', 'doc_id', 'item_id'],
  content: ['content', 'text', 'memory', 'body', 'message', 'note', 'document', 'data', 'value', 'page_content', 'chunk'],
  created: ['created_at', 'created', 'timestamp', 'ts', 'time', 'datetime', 'date', 'inserted_at', 'createdat', 'created_ms'],
  lastUsed: ['last_used_at', 'last_used', 'last_accessed', 'last_accessed_at', 'accessed_at', 'last_access', 'used_at'],
  role: ['role', 'speaker', 'author_role'],
  kind: ['kind', 'memory_type', 'type', 'category'],
  tier: ['tier', 'level'],
  session: ['session_id', 'session', 'thread_id', 'thread', 'conversation_id', 'conversation', 'run_id', 'chat_id'],
  user: ['user_id', 'user', 'owner_id'],
  agent: ['agent_id', 'agent', 'assistant_id'],
  salience: ['salience', 'importance', 'priority', 'score', 'weight', 'confidence'],
}
const VECTOR_NAMES = /(embedding|vector|vec|emb)/i

function byName(cols: TableColumnInfo[], names: string[], taken: Set<string>): string | undefined {
  for (const n of names) {
    const c = cols.find((x) => x.name.toLowerCase() === n && !taken.has(x.name))
    if (c) return c.name
  }
  return undefined
}

const isBlobCol = (c: TableColumnInfo) => c.seen.includes('blob') || /blob|bytea/i.test(c.type)
const isTextCol = (c: TableColumnInfo) => !isBlobCol(c) && (c.seen.includes('text') || /char|text|clob|string/i.test(c.type))

/** The time unit a sample of values is in: text → ISO (unless it is all digits), numbers → seconds below 1e11, else ms. */
function guessTimeUnit(values: unknown[]): TimeUnit | undefined {
  const nums: number[] = []
  let iso = 0
  for (const v of values) {
    if (typeof v === 'number' || typeof v === 'bigint') nums.push(Number(v))
    else if (typeof v === 'string' && /^\s*-?\d+(\.\d+)?\s*$/.test(v)) nums.push(Number(v))
    else if (typeof v === 'string' && !Number.isNaN(Date.parse(v))) iso++
  }
  if (iso === 0 && nums.length === 0) return undefined
  if (iso >= nums.length) return 'iso'
  const max = Math.max(...nums.map(Math.abs))
  return max < 1e11 ? 'unix_s' : 'unix_ms'
}

/**
 * A mapping for `table`, pre-filled from names, types and `samples` (column → values of
 * the first rows). `tables` is every table of the store: a sqlite-vec `vec0` table beside
 * the mapped one is offered as its vector when the table has no vector column itself.
 */
export function suggestMapping(tables: TableInfo[], tableName: string, samples: Record<string, unknown[]>): Mapping {
  const t = tables.find((x) => x.name === tableName)
  if (!t) return { table: tableName, columns: { content: '' } }
  const cols = t.columns
  const taken = new Set<string>()
  const columns: Partial<Record<MappedField, string>> = {}
  const vectorish = (c: TableColumnInfo) => isBlobCol(c) || (VECTOR_NAMES.test(c.name) && c.constantLength !== null)
  for (const f of ['id', 'content', 'created', 'lastUsed', 'session', 'user', 'agent', 'role', 'tier', 'kind', 'salience'] as const) {
    const c = byName(
      cols.filter((x) => !(f === 'content' && vectorish(x))),
      NAMES[f],
      taken,
    )
    if (c) {
      columns[f] = c
      taken.add(c)
    }
  }
  if (!columns.content) {
    // No telling name: the text column with the longest values in the sample.
    const avg = (c: TableColumnInfo) => {
      const vs = (samples[c.name] ?? []).filter((v): v is string => typeof v === 'string')
      return vs.length ? vs.reduce((s, v) => s + v.length, 0) / vs.length : 0
    }
    const best = cols.filter((c) => isTextCol(c) && !taken.has(c.name) && !vectorish(c)).sort((a, b) => avg(b) - avg(a))[0]
    if (best) columns.content = best.name
  }
  const mapping: Mapping = { table: t.name, columns: { ...columns, content: columns.content ?? '' } }
  const timeCol = columns.created ?? columns.lastUsed
  if (timeCol) {
    const unit = guessTimeUnit(samples[timeCol] ?? [])
    if (unit) mapping.timeUnit = unit
  }
  // The vector: a BLOB of constant length (a multiple of 4), a JSON array of constant length, or a vec0 column.
  const vecCol =
    cols.find((c) => !taken.has(c.name) && t.kind === 'vec0' && /float\s*\[/i.test(c.type)) ??
    cols.find((c) => !taken.has(c.name) && isBlobCol(c) && c.constantLength !== null && c.constantLength % 4 === 0 && c.constantLength > 0) ??
    cols.find((c) => !taken.has(c.name) && !isBlobCol(c) && c.constantLength !== null && c.constantLength > 0 && VECTOR_NAMES.test(c.name)) ??
    cols.find((c) => !taken.has(c.name) && /^(vector|_float4|_float8)$/i.test(c.type))
  if (vecCol) {
    const encoding = t.kind === 'vec0' ? 'vec0' : /^(vector|_float4|_float8)$/i.test(vecCol.type) ? 'pgvector' : isBlobCol(vecCol) ? 'f32' : 'json'
    mapping.vector = { column: vecCol.name, encoding }
  } else if (t.kind === 'table') {
    // A separate vec0 table keyed by rowid (mcp-memory-service's shape): offered when there is exactly one.
    const vec0 = tables.filter((x) => x.kind === 'vec0' && !x.shadow)
    const col = vec0.length === 1 ? vec0[0].columns.find((c) => /float\s*\[/i.test(c.type)) : undefined
    if (col) mapping.vector = { column: col.name, encoding: 'vec0', table: vec0[0].name }
  }
  return mapping
}
