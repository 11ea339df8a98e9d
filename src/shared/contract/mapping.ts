/** The contract's mapping channels: a store's tables, a column mapping suggested, previewed and opened. */
import { z } from 'zod'
import type { Mapping, MappingPreview, TablesInfo } from '../mapping'
import { mappingSchema } from '../mapping'
import { out, storePath } from './common'
import type { OpenInfo } from './app'
import { pgTargetSchema, type PgTarget } from './postgres'

/** The store a mapping channel reads: a SQLite `path` or a Postgres `pg` (one of them, see `oneSource`). */
const mapSource = { path: storePath.optional(), pg: pgTargetSchema.optional() }
const oneSource = [(i: { path?: string; pg?: PgTarget }) => (i.path === undefined) !== (i.pg === undefined), 'give path or pg (one of them)'] as const

export const mappingChannels = {
  /**
   * A store's tables (columns, types, sampled shapes, row counts), the layout it opens as (null: none) and its saved
   * mapping: the mapping dialog's start. `path`: a SQLite file; `pg`: a Postgres database (the tables of its schema).
   */
  'store.tables': {
    input: z.strictObject({ ...mapSource, workspacePath: z.string().min(1).max(4096).optional() }).refine(...oneSource),
    output: out<TablesInfo>(),
  },
  /** A column mapping for one table, pre-filled from column names, types and sampled values. */
  'store.suggestMapping': { input: z.strictObject({ ...mapSource, table: z.string().min(1).max(200) }).refine(...oneSource), output: out<Mapping>() },
  /** The first 20 rows read through a mapping, each with per-field problems, and the mapping's own problems (missing column, wrong type…). */
  'store.previewMapping': { input: z.strictObject({ ...mapSource, mapping: mappingSchema }).refine(...oneSource), output: out<MappingPreview>() },
  /**
   * Open one table of a file or a Postgres database by a column mapping (read-only); the mapping is saved in the
   * workspace and reused on reopen. `saveAs` (with `pg.conn`) saves the connection once it opened, as pg.connect does.
   */
  'store.openMapped': {
    input: z
      .strictObject({
        ...mapSource,
        mapping: mappingSchema,
        workspacePath: z.string().min(1).max(4096).optional(),
        saveAs: z.string().trim().min(1).max(120).optional(),
      })
      .refine(...oneSource)
      .refine((i) => i.saveAs === undefined || i.pg?.conn !== undefined, 'saveAs needs pg.conn (a saved connection is saved already)'),
    output: out<OpenInfo>(),
  },
} as const
