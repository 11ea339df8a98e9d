/**
 * "Any table by mapping" for Postgres: the same mapping format as for SQLite
 * (shared/mapping.ts) turned into a PgLayout over one table, checked against
 * `information_schema` (missing columns and wrong types are BAD_INPUT naming the
 * column). Vectors: pgvector `vector(d)` or `real[]` (encoding `pgvector`, the
 * dense arm pushed down) or float32 `bytea` (encoding `f32`).
 */
import type { Mapping, MappingProblem, TimeUnit } from '../../../shared/mapping'
import { RecallscopeError } from '../../../shared/result'
import { ident, type PgColumn, type PgLayout, type VectorStorage } from '../postgres/layouts'
import { defaultModelLabel } from './sqlite'

const NUMERIC = ['int2', 'int4', 'int8', 'float4', 'float8', 'numeric']
const TEXTUAL = ['text', 'varchar', 'bpchar', 'name', 'citext', 'json', 'jsonb', 'uuid']

/** Epoch ms (float8) from a time column, by its type and the mapping's unit. */
function timeExpr(x: string, c: PgColumn, unit: TimeUnit | undefined): string {
  if (c.udt.startsWith('timestamp') || c.udt === 'date') return `(extract(epoch from ${x}) * 1000)::float8`
  if (NUMERIC.includes(c.udt)) {
    if (unit === 'unix_s') return `(${x}::float8 * 1000)`
    if (unit === 'unix_ms') return `${x}::float8`
    return `(CASE WHEN abs(${x}::float8) < 1e11 THEN ${x}::float8 * 1000 ELSE ${x}::float8 END)`
  }
  const t = `${x}::text`
  const num = `(CASE WHEN ${t} ~ '^\\s*-?[0-9]+(\\.[0-9]+)?\\s*$' THEN ${t}::float8 END)`
  const iso = `(CASE WHEN ${t} !~ '^\\s*-?[0-9]+(\\.[0-9]+)?\\s*$' THEN (extract(epoch from (${t})::timestamptz) * 1000)::float8 END)`
  if (unit === 'iso') return iso
  if (unit === 'unix_s') return `(${num} * 1000)`
  if (unit === 'unix_ms') return num
  return `coalesce((CASE WHEN abs(${num}) < 1e11 THEN ${num} * 1000 ELSE ${num} END), ${iso})`
}

/**
 * The PgLayout of a mapping over `schema.table`, or BAD_INPUT listing every problem
 * (details.problems: field, column, message), each naming its column.
 */
export function mappedPgLayout(schema: string, columns: PgColumn[], m: Mapping, label: string): PgLayout {
  return planMappedPg(schema, columns, m, label).layout
}

/** What the mapping dialog's preview needs beyond the layout: the rows' SQL over any FROM, the raw time and vector-length expressions. */
export interface MappedPgPlan {
  layout: PgLayout
  /** `SELECT <canonical columns>, <extra> FROM <from> x`: the layout's memories over another row source aliased x */
  memoriesOver(from: string, extra?: string): string
  /** the table, quoted: schema.table */
  table: string
  /** epoch ms without the fallback to 0 (NULL when the value does not read), per mapped time field */
  timeMs: Partial<Record<'created' | 'lastUsed', string>>
  /** the vector's length per row (-1: a bytea whose length is not a multiple of 4), null when no vector is mapped */
  dim: string | null
}

/** The layout of a mapping and the expressions the preview reuses; BAD_INPUT (details.problems) when it does not fit. */
export function planMappedPg(schema: string, columns: PgColumn[], m: Mapping, label: string): MappedPgPlan {
  const problems: MappingProblem[] = []
  const tables = new Map<string, Map<string, PgColumn>>()
  for (const c of columns) {
    let t = tables.get(c.table)
    if (!t) tables.set(c.table, (t = new Map<string, PgColumn>()))
    t.set(c.column, c)
  }
  const cols = tables.get(m.table)
  if (!cols)
    throw new RecallscopeError(
      'BAD_INPUT',
      `${label}: the mapping names table "${m.table}", which is not in schema "${schema}" (tables: ${[...tables.keys()].join(', ') || 'none'})`,
      {
        problems: [{ field: 'table', column: m.table, message: `no table "${m.table}" in schema "${schema}"` }],
      },
    )
  const get = (field: string, name: string | undefined): PgColumn | null => {
    if (name === undefined) return null
    const c = cols.get(name)
    if (!c) problems.push({ field, column: name, message: `${field}: no column "${name}" in table "${m.table}" (columns: ${[...cols.keys()].join(', ')})` })
    return c ?? null
  }
  const f = Object.fromEntries(Object.entries(m.columns).map(([k, v]) => [k, get(k, v)])) as Record<keyof Mapping['columns'], PgColumn | null>
  for (const k of ['created', 'lastUsed'] as const) {
    const c = f[k]
    if (c && !(c.udt.startsWith('timestamp') || c.udt === 'date' || NUMERIC.includes(c.udt) || TEXTUAL.includes(c.udt)))
      problems.push({ field: k, column: c.column, message: `${k}: column "${c.column}" is ${c.udt}, not a time, a number or text` })
    if (c && m.timeUnit === 'iso' && NUMERIC.includes(c.udt))
      problems.push({ field: k, column: c.column, message: `${k}: column "${c.column}" is ${c.udt}: a number, not ISO text (timeUnit unix_s or unix_ms?)` })
  }
  if (f.salience && !NUMERIC.includes(f.salience.udt))
    problems.push({ field: 'salience', column: f.salience.column, message: `salience: column "${f.salience.column}" is ${f.salience.udt}, not a number` })
  if (f.content && f.content.udt === 'bytea')
    problems.push({ field: 'content', column: f.content.column, message: `content: column "${f.content.column}" is bytea, not text` })
  let storage: VectorStorage | null = null
  let vcol: PgColumn | null = null
  if (m.vector) {
    if (m.vector.table && m.vector.table !== m.table)
      problems.push({
        field: 'vector',
        column: m.vector.table,
        message: 'vector: a separate vector table is for SQLite (sqlite-vec); in Postgres, map a column of the table',
      })
    vcol = get('vector', m.vector.column)
    if (vcol) {
      storage = vcol.udt === 'vector' ? 'vector' : vcol.udt === '_float4' || vcol.udt === '_float8' ? 'array' : vcol.udt === 'bytea' ? 'bytea' : null
      const want = m.vector.encoding
      if (!storage)
        problems.push({
          field: 'vector',
          column: vcol.column,
          message: `vector: column "${vcol.column}" is ${vcol.udt}; recallscope reads pgvector vector, real[] or bytea (float32)`,
        })
      else if (want === 'json' || want === 'vec0' || (want === 'f32') !== (storage === 'bytea'))
        problems.push({
          field: 'vector',
          column: vcol.column,
          message: `vector: column "${vcol.column}" is ${vcol.udt}, encoding ${want} does not fit (use ${storage === 'bytea' ? 'f32' : 'pgvector'})`,
        })
    }
  }
  if (problems.length)
    throw new RecallscopeError('BAD_INPUT', `The mapping for ${label} does not fit: ${problems.map((p) => p.message).join('; ')}`, { problems })

  const x = (c: PgColumn | null) => (c ? `x.${ident(c.column)}` : null)
  const text = (c: PgColumn | null) => (c ? `${x(c)}::text` : 'NULL::text')
  const lower = (c: PgColumn | null) => (c ? `nullif(lower(trim(${x(c)}::text)), '')` : 'NULL::text')
  const id = f.id ? `${x(f.id)}::text` : `x.ctid::text`
  const mapped = new Set(Object.values(m.columns))
  if (m.vector) mapped.add(m.vector.column)
  const rest = [...cols.values()].filter((c) => !mapped.has(c.column) && c.udt !== 'bytea' && c.udt !== 'vector').slice(0, 50)
  const metadata = rest.length
    ? `jsonb_build_object(${rest.map((c) => `'${c.column.replace(/'/g, "''")}', x.${ident(c.column)}`).join(', ')})::text`
    : 'NULL::text'
  const T = `${ident(schema)}.${ident(m.table)}`
  const memoriesOver = (
    from: string,
    extra = '',
  ) => `SELECT ${id} AS id, ${text(f.agent)} AS agent_id, ${text(f.user)} AS user_id, ${text(f.session)} AS session_id,
      ${lower(f.role)} AS role, ${lower(f.kind)} AS kind, ${f.tier ? lower(f.tier) : `'long_term'::text`} AS tier, coalesce(${text(f.content)}, '') AS content, NULL::text AS summary,
      ${f.salience ? `${x(f.salience)}::float8` : 'NULL::float8'} AS salience,
      ${f.created ? `coalesce(${timeExpr(x(f.created)!, f.created, m.timeUnit)}, 0)` : '0::float8'} AS created_at,
      ${f.lastUsed ? timeExpr(x(f.lastUsed)!, f.lastUsed, m.timeUnit) : 'NULL::float8'} AS last_used_at, NULL::float8 AS use_count, NULL::float8 AS turn,
      'mapped' AS source, ${metadata} AS metadata, NULL::text AS tenant_id${extra ? `, ${extra}` : ''}
    FROM ${from} x`
  const memories = memoriesOver(T)
  const sessions = f.session
    ? `SELECT mm.session_id AS id, min(mm.agent_id) AS agent_id, min(mm.user_id) AS user_id, NULL::text AS tenant_id,
         min(mm.created_at) AS started_at, max(mm.created_at) AS ended_at, NULL::text AS summary, 0 AS is_archived
       FROM (${memories}) mm WHERE mm.session_id IS NOT NULL GROUP BY mm.session_id`
    : `SELECT NULL::text AS id, NULL::text AS agent_id, NULL::text AS user_id, NULL::text AS tenant_id, NULL::float8 AS started_at, NULL::float8 AS ended_at, NULL::text AS summary, 0 AS is_archived WHERE false`
  // The model: the mapping's, else `<table>:<dim>` per row (the store records none), so the label follows the data.
  const dimOf = (a: string) =>
    storage === 'vector'
      ? `vector_dims(${a})`
      : storage === 'array'
        ? `cardinality(${a})`
        : `(CASE WHEN length(${a}) % 4 = 0 THEN length(${a}) / 4 ELSE -1 END)`
  const slug = defaultModelLabel(m.table, 0).replace(/:0$/, '')
  const model = (a: string) => (m.vector?.model ? `'${m.vector.model.replace(/'/g, "''")}'::text` : `('${slug}:' || ${dimOf(a)})::text`)
  const idOf = (a: string) => (f.id ? `${a}.${ident(f.id.column)}::text` : `${a}.ctid::text`)
  const v = vcol ? ident(vcol.column) : null
  const layout: PgLayout = {
    layout: 'mapped',
    detectedBecause: `mapping of ${schema}.${m.table}: ${Object.entries(m.columns)
      .map(([k, c]) => `${c} → ${k}`)
      .join(', ')}${vcol ? `, ${vcol.column} → vector (${storage})` : ''}${m.timeUnit ? `, times as ${m.timeUnit}` : ''}`,
    schema,
    memories,
    sessions,
    embeddings: v
      ? `SELECT 'memory'::text AS owner_type, ${idOf('x')} AS owner_id, ${model(`x.${v}`)} AS model, x.${v} AS vec FROM ${T} x WHERE x.${v} IS NOT NULL`
      : null,
    vectorStorage: storage,
    vectorTable: v ? { table: m.table, column: vcol!.column, id: idOf('e'), ownerType: `'memory'::text`, model: model(`e.${v}`) } : null,
    recallEvents: null,
    memoryTable: m.table,
  }
  const timeMs: MappedPgPlan['timeMs'] = {}
  if (f.created) timeMs.created = timeExpr(x(f.created)!, f.created, m.timeUnit)
  if (f.lastUsed) timeMs.lastUsed = timeExpr(x(f.lastUsed)!, f.lastUsed, m.timeUnit)
  return { layout, memoriesOver, table: T, timeMs, dim: v ? dimOf(`x.${v}`) : null }
}
