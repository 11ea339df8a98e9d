/**
 * Which files the renderer may name for main to read or write by path (issue 10, HIGH 3).
 *
 * Whoever holds the bridge token (or runs script in the renderer) must not be able to
 * make main read `/etc/passwd` or write `~/.bashrc`. So `cases.import {path}` and
 * `cases.export {path}` only take paths the user chose outside the renderer: on the
 * command line (`serve --db/--workspace`) or in the native file dialog (`store.pick`),
 * which main records here. The renderer's own flows send file text instead (and get
 * text back), so they need no grant. Opening a DB (`store.open`, the Library field) is
 * read-only and guarded by file identity, so it does not need one either.
 */
import path from 'node:path'
import { RecallscopeError } from '../../shared/result'
import { samePath } from './fileIdentity'

export type GrantSource = 'command line' | 'file dialog'

export class PathGrants {
  private readonly granted = new Map<string, GrantSource>()

  /** Record a path the user chose outside the renderer. */
  grant(p: string | null | undefined, source: GrantSource): void {
    if (typeof p === 'string' && p.trim() !== '') this.granted.set(path.resolve(p), source)
  }

  /** Was this file (by identity or canonical path) chosen by the user? */
  has(p: string): boolean {
    const abs = path.resolve(p)
    if (this.granted.has(abs)) return true
    for (const g of this.granted.keys()) if (samePath(g, abs)) return true
    return false
  }

  /** The path, when granted; else FORBIDDEN naming the channel (never the file's contents). */
  check(p: string, what: string): string {
    if (this.has(p)) return path.resolve(p)
    throw new RecallscopeError(
      'FORBIDDEN',
      `${what}: ${path.resolve(p)} was not chosen in the file dialog or on the command line; send the file's text instead (the app only reads and writes files you picked)`,
    )
  }

  /** The granted paths (tests, diagnostics). */
  list(): { path: string; source: GrantSource }[] {
    return [...this.granted].map(([p, source]) => ({ path: p, source }))
  }
}
