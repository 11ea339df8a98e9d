/**
 * "Any table by mapping": the JSON a user writes (or the Library's mapping dialog
 * saves) to open a table recallscope has no layout for, as memories. The same
 * format serves SQLite files and Postgres tables; the workspace keeps the last
 * one used, so a reopen needs nothing. Shapes only: no Node, no SQL here.
 */
import { z } from 'zod'
import { TIME_UNITS, VECTOR_ENCODINGS, type MappedField, type TimeUnit, type VectorEncoding } from './mappingFields'

export type { MappedField, TimeUnit, VectorEncoding }

const name = z.string().trim().min(1, 'a name is required').max(200)

const mappingVectorSchema = z.strictObject({
  /** the column holding the vector */
  column: name,
  encoding: z.enum(VECTOR_ENCODINGS),
  /** A separate table holding the vectors (e.g. a sqlite-vec `vec0` table). @default the mapped table */
  table: name.optional(),
  /** In that table, the column naming the memory row. @default rowid */
  key: name.optional(),
  /** In the mapped table, the column `key` refers to. @default rowid */
  ref: name.optional(),
  /** The model that made the vectors. @default `<table>:<dim>` (an unlabelled store: any embedder of that length is compared) */
  model: z.string().trim().min(1).max(300).optional(),
})

export const mappingSchema = z.strictObject({
  /** The table (or view) whose rows are memories. */
  table: name,
  /** Postgres only: the schema the table is in. @default the URL's `?schema=` or current_schema() */
  schema: name.optional(),
  /** Column of the table for each canonical field; only `content` is required (id defaults to the rowid). */
  columns: z.strictObject({
    id: name.optional(),
    content: name,
    created: name.optional(),
    lastUsed: name.optional(),
    role: name.optional(),
    kind: name.optional(),
    tier: name.optional(),
    session: name.optional(),
    user: name.optional(),
    agent: name.optional(),
    salience: name.optional(),
  }),
  /** How created / last used are stored. @default guessed per value */
  timeUnit: z.enum(TIME_UNITS).optional(),
  vector: mappingVectorSchema.optional(),
})

export type Mapping = z.infer<typeof mappingSchema>

/** One column of a table, as `store.tables` lists it. */
export interface TableColumnInfo {
  name: string
  /** the declared type ('' when none: SQLite lets a column have none) */
  type: string
  /** SQLite storage classes seen in a sample of rows ('text', 'integer', 'real', 'blob', 'null') */
  seen: string[]
  /** BLOB length (bytes) or JSON array length when the sampled values all agree, else null */
  constantLength: number | null
}

export interface TableInfo {
  name: string
  /** 'table' | 'view' | 'vec0' (a sqlite-vec virtual table) | 'virtual' */
  kind: 'table' | 'view' | 'vec0' | 'virtual'
  columns: TableColumnInfo[]
  /** rows, counted up to `rowsCapped` */
  rows: number
  rowsCapped: boolean
  /** an FTS/vec0 shadow table (listed, but not offered) */
  shadow: boolean
}

export interface TablesInfo {
  path: string
  /** the layout detected, or null when the file is none recallscope knows (then a mapping opens it) */
  layout: string | null
  /** what the store is: a SQLite file, a Postgres schema, or a LanceDB folder (its tables read as SQLite tables) */
  format: 'sqlite' | 'postgres' | 'lancedb'
  tables: TableInfo[]
  /** the mapping saved in this store's workspace by an earlier open, if any */
  saved: Mapping | null
}

/** A problem with a mapping, naming the field and column it is about. */
export interface MappingProblem {
  /** the mapping field: 'table', 'content', 'created', 'vector', … */
  field: string
  /** the column (or table) the problem is about */
  column: string
  message: string
}

/** One row of the preview: what the mapping makes of it, and per-field problems. */
export interface PreviewRow {
  id: string
  content: string
  createdAt: number | null
  lastUsedAt: number | null
  role: string | null
  kind: string | null
  tier: string | null
  sessionId: string | null
  userId: string | null
  agentId: string | null
  salience: number | null
  /** vector length, null when the row has none */
  dim: number | null
  /** field → what is wrong with this row's value */
  errors: Partial<Record<MappedField | 'vector', string>>
}

export interface MappingPreview {
  rows: PreviewRow[]
  /** problems with the mapping itself (missing columns, wrong types…): open refuses while there are any */
  problems: MappingProblem[]
  /** the vectors' length and the model label they get, when mapped and readable */
  vector: { dim: number; model: string } | null
}
