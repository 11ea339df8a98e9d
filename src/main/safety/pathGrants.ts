/**
 * Which files the renderer may name for main to read or write by path (issue 10, HIGH 3).
 *
 * Whoever holds the bridge token (or runs script in the renderer) must not be able to
 * make main read `/etc/passwd` or write `~/.bashrc`. So a path main reads or writes
 * because the renderer named it must have been chosen by the user outside the page:
 *
 * * on the command line (`serve --db/--workspace`, `npm start -- FILE`);
 * * in the native file dialog (`store.pick`), which main records here with what the
 *   dialog was for: an open dialog lets main read the file, a save dialog lets it write
 *   (and read back) the file;
 * * in browser mode, also the Library's path fields: the page there is served by the
 *   user's own `serve` run and every call carries its per-run token, so a typed path is
 *   the user's choice (`App.confineTyped`). In the desktop app the renderer cannot name
 *   files at all; the dialogs do.
 *
 * `cases.import/export` take paths only from grants in both modes (the renderer sends the
 * file's text instead). Writes are guarded by file identity as well (safety/fileIdentity):
 * a grant never lets main write an open DB.
 */
import path from 'node:path'
import { RecallscopeError } from '../../shared/result'
import type { PickPurpose } from '../../shared/contract'
import { isPostgresUrl } from '../store/postgres/url'
import { sameFile } from './fileIdentity'

export type GrantSource = 'command line' | 'file dialog' | 'recent files'
/** `read`: main may read it; `write`: main may create, replace and read it. */
export type GrantAccess = 'read' | 'write'

/** One native dialog, described without Electron types (the shell maps it, tests fake it). */
export interface PickDialog {
  purpose: PickPurpose
  /** `open`: an existing file; `folder`: an existing folder; `save`: a file to create or replace */
  kind: 'open' | 'folder' | 'save'
  title: string
  filters: { name: string; extensions: string[] }[]
  defaultPath?: string
}

const DB_FILTERS = [
  { name: 'SQLite databases', extensions: ['db', 'sqlite', 'sqlite3', 'db3'] },
  { name: 'All files', extensions: ['*'] },
]
const ALL = [{ name: 'All files', extensions: ['*'] }]

/** What each purpose shows and what it grants. */
const DIALOGS: Record<PickPurpose, Omit<PickDialog, 'purpose' | 'defaultPath'> & { access: GrantAccess }> = {
  db: { kind: 'open', title: 'Open a memory database', filters: DB_FILTERS, access: 'read' },
  dbFolder: { kind: 'folder', title: 'Open a memory store folder', filters: [], access: 'read' },
  importIn: {
    kind: 'open',
    title: 'Import from',
    filters: [{ name: 'Engram DB, JSONL or LoCoMo JSON', extensions: ['db', 'sqlite', 'jsonl', 'ndjson', 'json'] }, ...ALL],
    access: 'read',
  },
  importOut: { kind: 'save', title: 'Import into a new memory database', filters: DB_FILTERS, access: 'write' },
  casesIn: { kind: 'open', title: 'Import eval cases', filters: [{ name: 'JSONL / JSON', extensions: ['jsonl', 'json'] }, ...ALL], access: 'read' },
  casesOut: { kind: 'save', title: 'Export eval cases', filters: [{ name: 'JSONL', extensions: ['jsonl'] }, ...ALL], access: 'write' },
}

/** The dialog for a purpose (what the shell shows). */
export function pickDialog(purpose: PickPurpose, defaultPath?: string): PickDialog {
  const { access: _access, ...d } = DIALOGS[purpose]
  return { purpose, ...d, ...(defaultPath ? { defaultPath } : {}) }
}

/** What a pick for this purpose lets main do with the chosen path. */
export function pickAccess(purpose: PickPurpose): GrantAccess {
  return DIALOGS[purpose].access
}

/**
 * libpq parameters that make the driver read a local file (pg-connection-string reads
 * sslcert/sslkey/sslrootcert with readFileSync). A URL the renderer typed must not name
 * files either, so such a URL needs a grant (the command line) in the desktop app.
 */
const PG_FILE_PARAMS = ['sslcert', 'sslkey', 'sslrootcert', 'sslcrl', 'passfile', 'service', 'servicefile']

/** Does this postgres:// URL make the driver read local files? */
export function pgUrlNamesFiles(url: string): boolean {
  try {
    const u = new URL(url.trim())
    return PG_FILE_PARAMS.some((k) => u.searchParams.has(k))
  } catch {
    return false // not parseable: the source refuses it with its own BAD_INPUT
  }
}

export class PathGrants {
  private readonly granted = new Map<string, { source: GrantSource; access: GrantAccess }>()

  /** Record a path (or postgres:// URL) the user chose outside the renderer. A write grant covers reading. */
  grant(p: string | null | undefined, source: GrantSource, access: GrantAccess): void {
    if (typeof p !== 'string' || p.trim() === '') return
    const key = keyOf(p)
    const had = this.granted.get(key)
    if (had?.access === 'write' && access === 'read') return // never narrow an existing write grant
    this.granted.set(key, { source, access })
  }

  /**
   * Was this file chosen by the user for `access`? Matched strictly: the same spelling, or
   * the same file by device + inode, or the same canonical path (case kept: `A.db` is not
   * `a.db` on a case-sensitive file system, and a grant must not widen to another file).
   */
  has(p: string, access: GrantAccess): boolean {
    const key = keyOf(p)
    const ok = (g: { access: GrantAccess } | undefined) => !!g && (access === 'read' || g.access === 'write')
    if (ok(this.granted.get(key))) return true
    if (isPostgresUrl(p)) return false // URLs only by their exact text
    for (const [g, v] of this.granted) if (ok(v) && !isPostgresUrl(g) && sameFile(g, key)) return true
    return false
  }

  /** The resolved path when granted; else FORBIDDEN naming the channel (never the file's contents). */
  check(p: string, what: string, access: GrantAccess): string {
    if (this.has(p, access)) return keyOf(p)
    throw new RecallscopeError(
      'FORBIDDEN',
      `${what}: ${isPostgresUrl(p) ? 'this URL names local files (ssl/pass files) and' : `${path.resolve(p)}`} was not chosen in the file dialog or on the command line; ` +
        (access === 'write'
          ? 'choose where to write with the Save dialog (the app only writes files you picked)'
          : "choose it with the Open dialog, or send the file's text instead (the app only reads files you picked)"),
      { path: isPostgresUrl(p) ? null : path.resolve(p), access },
    )
  }

  /** Replace every grant with `list` (a store host's worker mirrors main's grants). */
  replace(list: { path: string; source: GrantSource; access: GrantAccess }[]): void {
    this.granted.clear()
    for (const g of list) this.granted.set(g.path, { source: g.source, access: g.access })
  }

  /** The granted paths (tests, diagnostics, the store hosts' mirror). */
  list(): { path: string; source: GrantSource; access: GrantAccess }[] {
    return [...this.granted].map(([p, g]) => ({ path: p, ...g }))
  }
}

function keyOf(p: string): string {
  return isPostgresUrl(p) ? p.trim() : path.resolve(p)
}
