/** The contract's app and store channels: what is open, opening and closing a DB, the native file dialog. */
import { z } from 'zod'
import type { DbFacts } from '../types'
import { out } from './common'

export interface AppInfo {
  version: string
  /** 'electron' (preload bridge) or 'browser' (loopback HTTP bridge) */
  mode: 'electron' | 'browser'
  /** The DB open right now, if any. */
  current: OpenInfo | null
  /** Path of the generated demo DB (may not exist yet). */
  demoPath: string
}

export interface OpenInfo {
  path: string
  layout: DbFacts['layout']
  /** Why this layout was detected (tables or files found), for framework stores. */
  detectedBecause?: string
  readOnly: boolean
  /** Write mode was asked for but the user chose "Open read-only" in the desktop app's confirmation: opened read-only. */
  writeDeclined?: true
  workspacePath: string
  /** Read from a private copy because the DB's folder is read-only (a snapshot: reopen to see newer commits). */
  snapshot?: boolean
  memories: number
  sessions: number
  tookMs: number
}

export interface RecentFile {
  path: string
  openedAt: number
  layout: string | null
  exists: boolean
}
/** What a native file dialog is for (store.pick): decides open vs save and what main may do with the file. */
export const pickPurpose = z.enum(['db', 'dbFolder', 'importIn', 'importOut', 'casesIn', 'casesOut', 'logIn'])
export type PickPurpose = z.infer<typeof pickPurpose>

export const appChannels = {
  // --- app -----------------------------------------------------------------
  /** Version, bridge mode, the DB open right now and where the demo DB lives. */
  'app.info': { input: z.strictObject({}), output: out<AppInfo>() },

  // --- store ---------------------------------------------------------------
  /** Open an agent memory DB (read-only unless `write`); its workspace DB is created beside it. */
  'store.open': {
    input: z.strictObject({
      path: z.string().trim().min(1, 'path is required').max(4096),
      /** @default `<path>.recallscope` */
      workspacePath: z.string().min(1).max(4096).optional(),
      /**
       * Open the agent DB read-write (write mode). The desktop app first asks the user in a native
       * message box (once per file per run); a no opens read-only with `writeDeclined: true`. @default false
       */
      write: z.boolean().default(false),
    }),
    output: out<OpenInfo>(),
  },
  /** Open the demo DB, generating it first if it does not exist. */
  'store.openDemo': { input: z.strictObject({ regenerate: z.boolean().default(false) }), output: out<OpenInfo>() },
  /** Counts per agent/user/kind/tier/role, embedding models, malformed rows, FTS status. */
  'store.facts': { input: z.strictObject({}), output: out<DbFacts>() },
  /** Recently opened files, newest first. */
  'store.recent': { input: z.strictObject({}), output: out<RecentFile[]>() },
  /** Close the current DB. */
  'store.close': { input: z.strictObject({}), output: out<{ closed: boolean }>() },
  /**
   * The desktop app's native file dialog (browser mode: `supported: false`, type a path instead).
   * `purpose` picks an open, folder or save dialog; main keeps the chosen path and takes it (only
   * it) for that use: `db`/`dbFolder` → store.open, `importIn`/`importOut` → import.start `in`/`out`,
   * `casesIn`/`casesOut` → cases.import/export `path`, `logIn` → trace.addLog `path`. `path: null` when cancelled.
   */
  'store.pick': {
    input: z.strictObject({
      /** @default 'db' */
      purpose: pickPurpose.default('db'),
      /** where the dialog starts (a suggestion: the user still confirms) */
      defaultPath: z.string().trim().min(1).max(4096).optional(),
    }),
    output: out<{ supported: boolean; path: string | null }>(),
  },
} as const
