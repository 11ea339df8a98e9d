/**
 * What every importer shares: the report (what was written, what was skipped or
 * repaired and why), the options, and the output lifecycle (temp file, rename on
 * success, nothing left behind on error or cancel).
 *
 * Foreign input is untrusted: a bad row never stops an import. It is skipped (or
 * repaired) and recorded with its location, so the user sees exactly what did not
 * make it across (docs/internals/design.md "Data": malformed rows are skipped and counted).
 */
import fs from 'node:fs'
import path from 'node:path'
import Database from 'better-sqlite3'
import { RecallscopeError } from '../../../shared/result'
import { migrate } from '../sqlite/connection'
import { WORKSPACE_MIGRATIONS } from '../sqlite/schema'
import { assertReplaceable, CanonicalWriter } from '../sqlite/canonicalWriter'
import { assertFreshTemp, assertNotOpenDb, findAlias } from '../../safety/fileIdentity'
import { registerTemp } from '../../safety/tempFiles'

/** The report types live in the shared contract: an import job's result crosses IPC as-is. */
export type { ImportIssue, ImportReport } from '../../../shared/contract'
import type { ImportIssue, ImportReport } from '../../../shared/contract'
import { parseJsonSafe } from '../../safety/json'

export interface ImportOptions {
  /** input file */
  input: string
  /** canonical DB to write */
  output: string
  /** overwrite an existing output. @default false */
  force?: boolean
  /** model name for stored vectors whose source does not name one (Engram, JSONL lines without `model`). @default 'nomic-embed-text' */
  model?: string
  /** also write offline hashing-256 vectors (memories and session summaries). @default 'none' (LoCoMo: 'hashing') */
  embed?: 'hashing' | 'none'
  /** wall clock for provenance rows (workspace notes/meta); explicit so tests are exact. @default Date.now() */
  now?: number
  /** cap on `issues` listed in the report (totals are always complete). @default 200 */
  maxIssues?: number
  /** progress callback (rows done, rows expected or 0 when unknown) */
  onProgress?: (done: number, total: number, message?: string) => void
  /** cancel: the output is discarded and CANCELLED thrown */
  signal?: AbortSignal
}

/** An importer, registered in IMPORTERS (the list a third party would extend). */
export interface Importer {
  /** CLI sub-command: `recallscope import <name>` */
  name: string
  summary: string
  /** default for `embed` when the caller gives none */
  defaultEmbed: 'hashing' | 'none'
  /** whether `model` means anything for this input */
  usesModel: boolean
  run(opts: ImportOptions): Promise<ImportReport>
}

export const DEFAULT_ENGRAM_MODEL = 'nomic-embed-text'

/** Collects issues with a capped list and complete totals. */
export class ReportBuilder {
  private readonly list: ImportIssue[] = []
  private readonly totals = new Map<string, { action: ImportIssue['action']; reason: string; count: number }>()
  private truncated = false
  readonly notes: string[] = []
  skipped = 0
  repaired = 0

  constructor(private readonly cap = 200) {}

  add(issue: ImportIssue): void {
    if (issue.action === 'skipped') this.skipped++
    else this.repaired++
    const key = `${issue.action}\u0000${issue.reason}`
    const t = this.totals.get(key)
    if (t) t.count++
    else this.totals.set(key, { action: issue.action, reason: issue.reason, count: 1 })
    if (this.list.length < this.cap) this.list.push(issue)
    else this.truncated = true
  }

  skip(reason: string, at: Omit<ImportIssue, 'action' | 'reason'> = {}): void {
    this.add({ action: 'skipped', reason, ...at })
  }

  repair(reason: string, at: Omit<ImportIssue, 'action' | 'reason'> = {}): void {
    this.add({ action: 'repaired', reason, ...at })
  }

  /** The first issue recorded (for error messages). */
  first(): ImportIssue | undefined {
    return this.list[0]
  }

  count(action: ImportIssue['action'], reason: string): number {
    return this.totals.get(`${action}\u0000${reason}`)?.count ?? 0
  }

  build(base: Pick<ImportReport, 'importer' | 'input' | 'output' | 'workspace' | 'layout' | 'written' | 'models' | 'tookMs'>): ImportReport {
    const reasons = [...this.totals.values()].sort((a, b) => b.count - a.count || a.action.localeCompare(b.action) || a.reason.localeCompare(b.reason))
    return {
      ...base,
      skipped: this.skipped,
      repaired: this.repaired,
      reasons,
      issues: [...this.list],
      issuesTruncated: this.truncated,
      notes: [...this.notes],
    }
  }
}

/** Check the input before creating anything: exists, is a file, is not the output. */
export function checkPaths(opts: ImportOptions): { input: string; output: string } {
  if (typeof opts.input !== 'string' || opts.input.trim() === '') throw new RecallscopeError('BAD_INPUT', 'An input file is required (--in)')
  if (typeof opts.output !== 'string' || opts.output.trim() === '') throw new RecallscopeError('BAD_INPUT', 'An output file is required (--out)')
  const input = path.resolve(opts.input)
  const output = path.resolve(opts.output)
  let st: fs.Stats
  try {
    st = fs.statSync(input)
  } catch {
    throw new RecallscopeError('NOT_FOUND', `No such file: ${input}`)
  }
  if (!st.isFile()) throw new RecallscopeError('BAD_INPUT', `${input} is not a file`)
  // By file identity, not by name: a link or /proc alias of the input (or of any open DB) is refused.
  if (
    findAlias(output, [{ path: input, role: 'input' }], { targetIsDb: true }) ||
    findAlias(`${output}.recallscope`, [{ path: input, role: 'input' }], { targetIsDb: true })
  )
    throw new RecallscopeError('BAD_INPUT', 'The output must not be the input (imports never modify their input)')
  assertNotOpenDb(output, '--out', { targetIsDb: true })
  assertNotOpenDb(`${output}.recallscope`, '--out (its workspace)', { targetIsDb: true })
  assertReplaceable(output, opts.force) // now, as a typed error, not as a failed job
  if (opts.embed !== undefined && opts.embed !== 'hashing' && opts.embed !== 'none')
    throw new RecallscopeError('BAD_INPUT', `--embed must be hashing or none (got ${String(opts.embed)})`)
  return { input, output }
}

/** Throw CANCELLED when the signal fired. */
export function checkCancel(signal: AbortSignal | undefined): void {
  if (signal?.aborted) throw new RecallscopeError('CANCELLED', 'Import cancelled')
}

/**
 * Give the event loop a turn every `every` rows so a job's progress events and
 * cancel requests get through (JobManager jobs yield between chunks).
 */
export function makeTicker(opts: ImportOptions, total: number, every = 2000): (done: number, message?: string) => Promise<void> {
  let last = 0
  return async (done, message) => {
    if (done - last < every && done !== total) return
    last = done
    opts.onProgress?.(done, total, message)
    await new Promise<void>((r) => setImmediate(r))
    checkCancel(opts.signal)
  }
}

/**
 * Merge import provenance into a row's metadata without losing the original:
 * an object gets the extra keys; valid non-object JSON is kept under `value`;
 * text that is not JSON at all is kept verbatim under `_import.invalidMetadata`.
 * Returns the original text untouched when there is nothing to add.
 */
export function mergeMetadata(raw: unknown, extras: Record<string, unknown>): { text: string | null; invalid: boolean } {
  const has = Object.keys(extras).length > 0
  let parsed: unknown = null
  let invalid = false
  if (raw !== null && raw !== undefined) {
    if (typeof raw === 'string') {
      const r = parseJsonSafe(raw) // too deep counts as invalid: kept verbatim as text
      if (r.ok) parsed = r.value
      else invalid = true
    } else parsed = raw
  }
  if (invalid) {
    const imp = { ...((extras._import as Record<string, unknown> | undefined) ?? {}), invalidMetadata: raw }
    return { text: JSON.stringify({ ...extras, _import: imp }), invalid: true }
  }
  if (!has) return { text: raw === null || raw === undefined ? null : typeof raw === 'string' ? raw : JSON.stringify(raw), invalid: false }
  if (parsed === null) return { text: JSON.stringify(extras), invalid: false }
  if (typeof parsed === 'object' && !Array.isArray(parsed)) return { text: JSON.stringify({ ...parsed, ...extras }), invalid: false }
  return { text: JSON.stringify({ value: parsed, ...extras }), invalid: false }
}

/**
 * Vectors of one model must share one length. After loading, keep each model's
 * majority length (ties: the length written first) and delete the rest, reporting
 * each deleted owner. Returns the per-model facts of what remains.
 */
export function pruneMinorityDims(
  db: Database.Database,
  rb: ReportBuilder,
  where: (ownerType: string, ownerId: string) => Omit<ImportIssue, 'action' | 'reason'>,
): ImportReport['models'] {
  const groups = db
    .prepare(`SELECT owner_type ot, model m, dim d, count(*) n, min(rowid) first FROM embeddings GROUP BY 1, 2, 3 ORDER BY 1, 2, n DESC, first ASC`)
    .all() as { ot: 'memory' | 'session'; m: string; d: number; n: number; first: number }[]
  const keep = new Map<string, { dim: number; count: number }>()
  for (const g of groups) {
    const key = `${g.ot}\u0000${g.m}`
    if (!keep.has(key)) keep.set(key, { dim: g.d, count: g.n })
  }
  const del = db.prepare(`DELETE FROM embeddings WHERE owner_type = ? AND model = ? AND dim = ?`)
  for (const g of groups) {
    const k = keep.get(`${g.ot}\u0000${g.m}`)!
    if (k.dim === g.d) continue
    const owners = db
      .prepare(`SELECT owner_id FROM embeddings WHERE owner_type = ? AND model = ? AND dim = ? ORDER BY rowid`)
      .pluck()
      .all(g.ot, g.m, g.d) as string[]
    for (const o of owners) rb.skip('vector of the wrong dimension', { ...where(g.ot, o), detail: `${g.m}: ${g.d} values, the model's vectors have ${k.dim}` })
    del.run(g.ot, g.m, g.d)
  }
  return [...keep].map(([key, v]) => {
    const [ownerType, model] = key.split('\u0000') as ['memory' | 'session', string]
    return { model, ownerType, dim: v.dim, count: v.count }
  })
}

/** A workspace DB being written beside the output; moved into place after the output. */
export class WorkspaceWriter {
  readonly db: Database.Database
  readonly tmp: string
  private readonly releaseTemp: () => void
  constructor(readonly finalPath: string) {
    assertNotOpenDb(finalPath, 'import workspace', { targetIsDb: true })
    this.tmp = `${finalPath}.tmp-${process.pid}-${Date.now()}`
    assertFreshTemp(this.tmp, 'import workspace')
    this.releaseTemp = registerTemp(this.tmp, { sqlite: true })
    this.db = new Database(this.tmp)
    migrate(this.db, WORKSPACE_MIGRATIONS)
  }
  /** Close and rename into place (after the canonical DB's own rename, which clears stale workspaces). */
  finish(): string {
    this.db.close()
    assertNotOpenDb(this.finalPath, 'import workspace', { targetIsDb: true })
    for (const suffix of ['', '-wal', '-shm']) fs.rmSync(this.finalPath + suffix, { force: true })
    fs.renameSync(this.tmp, this.finalPath)
    this.releaseTemp()
    return this.finalPath
  }
  abort(): void {
    try {
      this.db.close()
    } catch {
      /* already closed */
    }
    for (const suffix of ['', '-journal', '-wal', '-shm']) fs.rmSync(this.tmp + suffix, { force: true })
    this.releaseTemp()
  }
}

/**
 * Run an import body against a CanonicalWriter (and optionally a workspace),
 * finishing both on success and removing every temp file on any error.
 * A run that writes no memory at all is an error (wrong format, empty file):
 * an empty DB would only hide the problem.
 */
export async function withOutput<T extends { memories: number }>(
  output: string,
  opts: ImportOptions,
  wantWorkspace: boolean,
  body: (w: CanonicalWriter, ws: WorkspaceWriter | null) => Promise<T>,
  describeEmpty: () => string,
): Promise<{ result: T; workspace: string | null }> {
  checkCancel(opts.signal)
  const w = new CanonicalWriter(output, { force: opts.force })
  let ws: WorkspaceWriter | null = null
  try {
    ws = wantWorkspace ? new WorkspaceWriter(`${output}.recallscope`) : null
    const result = await body(w, ws)
    if (result.memories === 0) throw new RecallscopeError('BAD_INPUT', describeEmpty())
    checkCancel(opts.signal)
    w.finish()
    let wsPath: string | null = null
    if (ws) {
      try {
        wsPath = ws.finish()
      } catch (e) {
        // The DB without its eval cases would be a partial output: take it back.
        fs.rmSync(output, { force: true })
        throw e
      }
    }
    return { result, workspace: wsPath }
  } catch (e) {
    w.abort()
    ws?.abort()
    throw e
  }
}

/** Timestamps from foreign input: epoch ms numbers, numeric strings, or ISO-8601 (zone-less = UTC, so imports are machine-independent). */
export function parseTime(v: unknown): number | null {
  if (typeof v === 'number') return Number.isFinite(v) ? Math.round(v) : null
  if (typeof v === 'bigint') return Number(v)
  if (typeof v !== 'string') return null
  const s = v.trim()
  if (s === '') return null
  if (/^-?\d+(\.\d+)?$/.test(s)) return Math.round(Number(s))
  // Date.parse reads "2024-01-02T10:00" as local time; pin zone-less date-times to UTC.
  const iso = /^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?$/.test(s) ? `${s.replace(' ', 'T')}Z` : s
  const t = Date.parse(iso)
  return Number.isNaN(t) ? null : t
}
