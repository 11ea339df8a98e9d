/** The contract's Postgres channels: test a server, connect, saved connections. */
import { z } from 'zod'
import { out } from './common'
import type { OpenInfo } from './app'

/** A Postgres connection as the Library's Connect form gives it: a URL, or the fields. */
export const pgConnectionSchema = z.union([
  z.strictObject({
    url: z.string().trim().min(1, 'url is required').max(4096),
    /** added to the URL (desktop app only; browser mode takes it from PGPASSWORD) */
    password: z.string().min(1).max(1024).optional(),
  }),
  z.strictObject({
    host: z.string().trim().min(1, 'host is required').max(255),
    port: z.number().int().min(1).max(65535).optional(),
    database: z.string().trim().min(1, 'database is required').max(255),
    user: z.string().trim().min(1).max(255).optional(),
    password: z.string().min(1).max(1024).optional(),
    sslmode: z.enum(['disable', 'prefer', 'require', 'verify-ca', 'verify-full']).optional(),
    /** the schema the store's tables are in. @default the server's search_path */
    schema: z.string().trim().min(1).max(255).optional(),
  }),
])
export type PgConnectionInput = z.infer<typeof pgConnectionSchema>

/**
 * A Postgres database the mapping dialog reads, named as pg.connect names one: the form's fields (or a URL)
 * or a saved connection's id. The password rules are pg.connect's.
 */
export const pgTargetSchema = z
  .strictObject({
    conn: pgConnectionSchema.optional(),
    savedId: z.string().trim().min(1).max(64).optional(),
  })
  .refine((i) => (i.conn === undefined) !== (i.savedId === undefined), 'give conn or savedId (one of them)')
export type PgTarget = z.infer<typeof pgTargetSchema>

/** A saved Postgres connection as the renderer sees it: never its password. */
export interface SavedPgConnection {
  id: string
  name: string
  /** without the password */
  url: string
  /** where the password comes from: the OS keychain (desktop app), PGPASSWORD, or none */
  password: 'keychain' | 'environment' | 'none'
}

/** What "Test" found on a Postgres server. */
export interface PgTestInfo {
  /** without the password */
  url: string
  layout: string
  detectedBecause: string | null
  memories: number
  /** the dense arm runs in the database (pgvector installed and the vectors in a column it reads) */
  denseInDatabase: boolean
  /** embedding models found */
  vectorModels: number
}

export const postgresChannels = {
  // --- postgres ------------------------------------------------------------
  /** Connect to a Postgres server, detect its memory layout, and disconnect (nothing is opened). */
  'pg.test': { input: z.strictObject({ conn: pgConnectionSchema }), output: out<PgTestInfo>() },
  /** Open a Postgres store from the form's fields or a saved connection; `saveAs` saves it (after it opened) under that name. */
  'pg.connect': {
    input: z
      .strictObject({
        conn: pgConnectionSchema.optional(),
        savedId: z.string().trim().min(1).max(64).optional(),
        saveAs: z.string().trim().min(1).max(120).optional(),
      })
      .refine((i) => (i.conn === undefined) !== (i.savedId === undefined), 'give conn or savedId (one of them)'),
    output: out<OpenInfo>(),
  },
  /** Saved Postgres connections, newest first (no passwords). */
  'pg.saved': { input: z.strictObject({}), output: out<SavedPgConnection[]>() },
  /** Forget a saved connection (and its encrypted password). */
  'pg.forget': { input: z.strictObject({ id: z.string().trim().min(1).max(64) }), output: out<{ removed: boolean }>() },
} as const
