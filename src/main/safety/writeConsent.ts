/**
 * Write mode needs the user's own yes (desktop app).
 *
 * `store.open { write: true }` comes from the renderer, and a renderer running someone
 * else's script could send it for any file it may read. So in the desktop app main asks
 * with a native message box — something the page cannot draw or click — before it opens
 * a DB for writing, and remembers a yes per file (by identity, see fileIdentity) for the
 * rest of the run. The answer comes from the shell, never from the renderer.
 *
 * Browser mode does not ask: the page is the user's own `serve` run and every call carries
 * its per-run token (the token is the user). CLI write flags are the user typing.
 */
import path from 'node:path'
import { isPostgresUrl, redactUrl } from '../store/postgres/url'
import { sameFile } from './fileIdentity'

/** The question, described without Electron types (the shell maps it to a message box, tests fake it). */
export interface WritePrompt {
  title: string
  message: string
  detail: string
  /** [read-only, allow]: index 0 is the default and the cancel answer */
  buttons: [string, string]
  /** the DB it is about (resolved) */
  path: string
}

/** Shows the prompt; true only when the user chose "Allow writes". */
export type ConfirmWrite = (prompt: WritePrompt) => Promise<boolean>

/** What the message box says for one file. */
function buildWritePrompt(p: string): WritePrompt {
  const abs = keyOf(p)
  const shown = isPostgresUrl(abs) ? redactUrl(abs) : abs // never a password in a dialog
  return {
    title: 'Allow writes to this memory database?',
    message: `Open ${isPostgresUrl(abs) ? 'this Postgres database' : path.basename(abs)} in write mode?`,
    detail:
      `${shown}\n\n` +
      'Write mode lets recallscope change the agent’s own database: “Write refresh to the agent DB” on the Recall screen sets ' +
      'last_used_at to now and adds 1 to use_count for the recalled memories, as the agent would. ' +
      'Nothing else is written. Read-only changes nothing in this file.',
    buttons: ['Open read-only', 'Allow writes'],
    path: abs,
  }
}

/** The files the user allowed writes to in this run, and the questions open right now. */
export class WriteConsent {
  private readonly allowed: string[] = []
  private readonly pending = new Map<string, Promise<boolean>>()

  /** Was writing to this file (the same file by identity) already allowed in this run? */
  has(p: string): boolean {
    const abs = keyOf(p)
    return this.allowed.some((a) => a === abs || (!isPostgresUrl(a) && !isPostgresUrl(abs) && sameFile(a, abs)))
  }

  /**
   * Ask once per file per run. Without a way to ask (`confirm` absent) the answer is no:
   * a desktop app that cannot show the question never writes. Two opens racing for the
   * same file share one question.
   */
  async ask(p: string, confirm: ConfirmWrite | undefined): Promise<boolean> {
    if (this.has(p)) return true
    if (!confirm) return false
    const abs = keyOf(p)
    const open = this.pending.get(abs)
    if (open) return open
    const q = confirm(buildWritePrompt(abs))
      .then((yes) => {
        if (yes === true) this.allowed.push(abs)
        return yes === true
      })
      .catch(() => false) // a dialog that failed is not a yes
      .finally(() => this.pending.delete(abs))
    this.pending.set(abs, q)
    return q
  }
}

/** A file by its absolute path; a postgres:// URL by its exact text. */
function keyOf(p: string): string {
  return isPostgresUrl(p) ? p.trim() : path.resolve(p)
}
