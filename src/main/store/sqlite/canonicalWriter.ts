/**
 * Writing canonical DBs (demo generator and importers). Output goes to a temp
 * file beside the target and is renamed into place only when complete, so a
 * failed or cancelled run never leaves a half-written DB behind.
 */
import fs from 'node:fs'
import path from 'node:path'
import Database from 'better-sqlite3'
import { RecallscopeError } from '../../../shared/result'
import { CANONICAL_FTS, CANONICAL_MIGRATIONS } from './schema'
import { migrate } from './connection'
import { encodeVector } from '../decode'
import { assertFreshTemp, assertNotOpenDb } from '../../safety/fileIdentity'
import { registerTemp } from '../../safety/tempFiles'
import { openRegularFile } from '../safeFiles'

export interface CanonicalMemoryRow {
  id: string
  agent_id: string | null
  user_id: string | null
  session_id: string | null
  role: string | null
  kind: string | null
  tier: string | null
  content: string
  summary: string | null
  salience: number | null
  created_at: number
  last_used_at: number | null
  use_count: number | null
  turn: number | null
  source: string | null
  /** JSON text (already serialised) or null */
  metadata: string | null
}

export interface CanonicalSessionRow {
  id: string
  agent_id: string | null
  user_id: string | null
  tenant_id: string | null
  started_at: number | null
  ended_at: number | null
  summary: string | null
  is_archived: number
}

export interface CanonicalEventRow {
  id: string
  at: number
  agent_id: string | null
  user_id: string | null
  session_id: string | null
  turn: number | null
  query: string | null
  cue: string | null
  preset: string | null
  config: string | null
  results: string
  /** the optional `decision` column (JSON `{text | toolCall, at, via}`, src/shared/trace.ts); the column is added on first use */
  decision?: string | null
}

/**
 * May an import replace what is at `abs`? Nothing there: yes. Otherwise only with `force`, and
 * only a SQLite database (or an empty file): `--force` with a typo'd `--out notes.txt` or
 * `~/.bashrc` must not turn that file into a DB (issue 10 audit).
 */
export function assertReplaceable(abs: string, force: boolean | undefined): void {
  let st: fs.Stats
  try {
    st = fs.statSync(abs)
  } catch {
    return // nothing there
  }
  if (!force) throw new RecallscopeError('CONFLICT', `${abs} already exists (pass --force to overwrite)`)
  if (st.isDirectory()) throw new RecallscopeError('BAD_INPUT', `${abs} is a folder: name the output file`)
  if (st.size === 0) return
  const head = Buffer.alloc(16)
  let n = 0
  try {
    const fd = openRegularFile(abs, 'output file')
    try {
      n = fs.readSync(fd, head, 0, 16, 0)
    } finally {
      fs.closeSync(fd)
    }
  } catch {
    /* unreadable: not provably a database, refused below */
  }
  if (n < 16 || head.toString('latin1') !== 'SQLite format 3\u0000')
    throw new RecallscopeError('CONFLICT', `${abs} exists and is not a SQLite database: --force replaces only a database; move it away or choose another file`)
}

/** A canonical DB being written. Call finish() to build FTS and move it into place. */
export class CanonicalWriter {
  readonly db: Database.Database
  private readonly tmp: string
  private finished = false
  private readonly releaseTemp: () => void
  private readonly insMemory: Database.Statement
  private readonly insSession: Database.Statement
  private readonly insEmbedding: Database.Statement
  private readonly insEvent: Database.Statement
  private insEventDecision: Database.Statement | null = null

  constructor(
    readonly outPath: string,
    opts: { force?: boolean } = {},
  ) {
    const abs = path.resolve(outPath)
    assertReplaceable(abs, opts.force)
    const dir = path.dirname(abs)
    if (!fs.existsSync(dir)) throw new RecallscopeError('NOT_FOUND', `Folder does not exist: ${dir}`)
    assertNotOpenDb(abs, 'output', { targetIsDb: true }) // safety/fileIdentity: never replace an open DB
    this.tmp = `${abs}.tmp-${process.pid}-${Date.now()}`
    assertFreshTemp(this.tmp, 'output') // never write through a link planted at the temp name
    this.releaseTemp = registerTemp(this.tmp, { sqlite: true }) // removed on SIGINT/SIGTERM (safety/tempFiles)
    this.db = new Database(this.tmp)
    // Bulk-load settings: the file is private until renamed, so durability can wait.
    this.db.pragma('journal_mode = OFF')
    this.db.pragma('synchronous = OFF')
    this.db.pragma('cache_size = -262144')
    migrate(this.db, CANONICAL_MIGRATIONS)
    this.insMemory = this.db.prepare(
      `INSERT INTO memories (id, agent_id, user_id, session_id, role, kind, tier, content, summary, salience, created_at, last_used_at, use_count, turn, source, metadata)
       VALUES (@id, @agent_id, @user_id, @session_id, @role, @kind, @tier, @content, @summary, @salience, @created_at, @last_used_at, @use_count, @turn, @source, @metadata)`,
    )
    this.insSession = this.db.prepare(
      `INSERT INTO sessions (id, agent_id, user_id, tenant_id, started_at, ended_at, summary, is_archived)
       VALUES (@id, @agent_id, @user_id, @tenant_id, @started_at, @ended_at, @summary, @is_archived)`,
    )
    this.insEmbedding = this.db.prepare(`INSERT OR REPLACE INTO embeddings (owner_type, owner_id, model, dim, vector) VALUES (?, ?, ?, ?, ?)`)
    this.insEvent = this.db.prepare(
      `INSERT INTO recall_events (id, at, agent_id, user_id, session_id, turn, query, cue, preset, config, results)
       VALUES (@id, @at, @agent_id, @user_id, @session_id, @turn, @query, @cue, @preset, @config, @results)`,
    )
    this.db.exec('BEGIN')
  }

  memory(r: CanonicalMemoryRow): void {
    this.insMemory.run(r)
  }
  session(r: CanonicalSessionRow): void {
    this.insSession.run(r)
  }
  embedding(ownerType: 'memory' | 'session', ownerId: string, model: string, v: ArrayLike<number> | Buffer): void {
    const blob = Buffer.isBuffer(v) ? v : encodeVector(v)
    this.insEmbedding.run(ownerType, ownerId, model, Buffer.isBuffer(v) ? v.length / 4 : v.length, blob)
  }
  event(r: CanonicalEventRow): void {
    if (r.decision === undefined) {
      const { decision: _none, ...row } = r
      this.insEvent.run(row)
      return
    }
    // Additive, like `context` / `query_vector`: only logs that record decisions carry the column.
    if (!this.insEventDecision) {
      this.db.exec('ALTER TABLE recall_events ADD COLUMN decision TEXT')
      this.insEventDecision = this.db.prepare(
        `INSERT INTO recall_events (id, at, agent_id, user_id, session_id, turn, query, cue, preset, config, results, decision)
         VALUES (@id, @at, @agent_id, @user_id, @session_id, @turn, @query, @cue, @preset, @config, @results, @decision)`,
      )
    }
    this.insEventDecision.run(r)
  }

  /** Rows in recall_events so far. */
  eventCount(): number {
    return this.db.prepare('SELECT count(*) FROM recall_events').pluck().get() as number
  }

  /**
   * Commit what is written and make the file readable by the recall engine mid-write:
   * the FTS index and planner statistics (scope queries are ~5× slower without them).
   */
  prepareForReads(): void {
    this.checkpoint()
    this.db.exec(CANONICAL_FTS)
    this.db.exec(`INSERT INTO memories_fts (memories_fts) VALUES ('rebuild')`)
    this.db.exec('ANALYZE')
    this.checkpoint()
  }

  /** Commit the open transaction and start a new one (bounds memory on huge loads). */
  checkpoint(): void {
    this.db.exec('COMMIT; BEGIN')
  }

  /**
   * Build FTS, set the journal mode, move into place. Returns the final path.
   * `wal`: leave the file in WAL mode (an agent that writes while recallscope reads; readers never block
   * its commits). Default: a rollback journal, one self-contained file.
   */
  finish(opts: { fts?: boolean; wal?: boolean; workspaceFile?: (finalPath: string) => void } = {}): string {
    this.db.exec('COMMIT')
    if (opts.fts !== false) {
      this.db.exec(CANONICAL_FTS)
      this.db.exec(`INSERT INTO memories_fts (memories_fts) VALUES ('rebuild')`)
    }
    this.db.exec('ANALYZE')
    this.db.pragma(opts.wal ? 'journal_mode = WAL' : 'journal_mode = DELETE')
    this.db.close()
    const abs = path.resolve(this.outPath)
    assertNotOpenDb(abs, 'output', { targetIsDb: true }) // again at the rename: something may have opened it meanwhile
    for (const suffix of ['-wal', '-shm', '.recallscope', '.recallscope-wal', '.recallscope-shm']) fs.rmSync(abs + suffix, { force: true })
    // The old file's vector snapshots (store/vectorCache.ts) describe data that is gone.
    fs.rmSync(`${abs}.recallscope-vectors`, { recursive: true, force: true })
    fs.renameSync(this.tmp, abs)
    this.finished = true
    this.releaseTemp()
    return abs
  }

  /** Throw away the temp file (on error or cancel). */
  abort(): void {
    if (this.finished) return
    try {
      this.db.close()
    } catch {
      /* already closed */
    }
    for (const suffix of ['', '-journal', '-wal', '-shm']) fs.rmSync(this.tmp + suffix, { force: true })
    this.releaseTemp()
  }
}
