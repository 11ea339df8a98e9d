/**
 * `import engram`: copy an Engram SQLite file (seed 002, docs/internals/recall-systems/engram.md;
 * layouts v0.2, v0.5 and v1.0) into a canonical DB.
 *
 * The column mapping is the TypeScript twin of `engramAdapter` in ./layout.ts
 * (the direct, copy-free view), so an imported DB and the opened Engram file show
 * the same memories; a test holds the two together. What the canonical columns
 * cannot hold (consolidated_from, certainty, status, contradicts, last_verified, a
 * non-canonical memory_type) is kept in metadata under `_engram`.
 *
 * The input is opened read-only (`readonly` + `PRAGMA query_only`): importing never
 * touches the agent's file.
 */
import Database from 'better-sqlite3'
import { openReadOnlyAgentDb } from '../sqlite/readOnlyOpen'
import { RecallscopeError } from '../../../shared/result'
import { hashEmbed, HASHING_MODEL } from '../../embed/hashing'
import { readTables } from '../sqlite/connection'
import { engramAdapter } from './layout'
import { decodeVector, cellText } from '../decode'
import { assertSqliteFile } from '../sqlite/connection'
import type { CanonicalMemoryRow } from '../sqlite/canonicalWriter'
import {
  checkPaths,
  DEFAULT_ENGRAM_MODEL,
  makeTicker,
  mergeMetadata,
  pruneMinorityDims,
  ReportBuilder,
  withOutput,
  type ImportOptions,
  type ImportReport,
  type Importer,
} from '../importers/common'
import { KIND_SET, ROLE_SET, TIER_SET } from '../decode'

type EngramTable = 'memories' | 'user_memories'

/** Raw Engram row → canonical row + what went wrong. Pure; exported for tests. */
function mapEngramRow(
  r: Record<string, unknown>,
  table: EngramTable,
  cols: Set<string>,
): { row: CanonicalMemoryRow; problems: { action: 'skipped' | 'repaired'; reason: string; detail?: string }[] } | { skip: string } {
  const id = r.id
  if (typeof id !== 'string' && typeof id !== 'number') return { skip: 'missing id' }
  if (typeof r.content !== 'string') return { skip: 'missing content' }
  const problems: { action: 'skipped' | 'repaired'; reason: string; detail?: string }[] = []
  const engram: Record<string, unknown> = {}
  const imp: Record<string, unknown> = {}

  // Roles: Engram's CHECK allows user/assistant/system; files written with the
  // check off (or by other tools) can hold anything else. Keep the memory, clear the role.
  let role: string | null = r.role == null ? null : cellText(r.role)
  if (role !== null && !ROLE_SET.has(role)) {
    problems.push({ action: 'repaired', reason: 'unknown role (kept, role cleared)', detail: role })
    imp.role = role
    role = null
  }
  // kind: the adapter maps memory_type onto the canonical kinds, anything else → episodic.
  let kind = 'episodic'
  if (cols.has('memory_type') && r.memory_type != null) {
    const mt = cellText(r.memory_type)
    if (KIND_SET.has(mt)) kind = mt
    else engram.memoryType = mt
  }
  // tier: v0.2 has none (everything was working memory).
  let tier: string | null = cols.has('tier') ? (r.tier == null ? null : cellText(r.tier)) : 'working'
  if (tier !== null && !TIER_SET.has(tier)) {
    problems.push({ action: 'repaired', reason: 'unknown tier (kept, tier cleared)', detail: tier })
    imp.tier = tier
    tier = null
  }
  let salience: number | null = null
  if (cols.has('importance') && r.importance != null) {
    const n = Number(r.importance)
    if (Number.isFinite(n)) salience = Math.min(1, Math.max(0, n))
  }
  let created: number | null = null
  if (typeof r.timestamp === 'number' && Number.isFinite(r.timestamp)) created = Math.round(r.timestamp)
  else if (typeof r.timestamp === 'bigint') created = Number(r.timestamp)
  else if (typeof r.timestamp === 'string' && r.timestamp.trim() !== '') {
    const n = Number(r.timestamp)
    const t = Number.isFinite(n) ? n : Date.parse(r.timestamp)
    if (Number.isFinite(t)) created = t
  }
  if (created === null) {
    problems.push({ action: 'repaired', reason: 'bad timestamp (kept, created_at NULL)', detail: String(r.timestamp) })
    imp.timestamp = r.timestamp ?? null
  }
  const useCount =
    cols.has('reinforcement_count') && r.reinforcement_count != null && Number.isFinite(Number(r.reinforcement_count)) ? Number(r.reinforcement_count) : null

  if (cols.has('consolidated_from') && r.consolidated_from != null) {
    try {
      engram.consolidatedFrom = JSON.parse(cellText(r.consolidated_from))
    } catch {
      engram.consolidatedFrom = cellText(r.consolidated_from)
    }
  }
  for (const [col, key] of [
    ['certainty', 'certainty'],
    ['last_verified', 'lastVerified'],
    ['status', 'status'],
    ['contradicts', 'contradicts'],
  ] as const) {
    if (cols.has(col) && r[col] != null) engram[key] = r[col]
  }
  const extras: Record<string, unknown> = {}
  if (Object.keys(engram).length) extras._engram = engram
  if (Object.keys(imp).length) extras._import = imp
  const meta = mergeMetadata(r.metadata, extras)
  if (meta.invalid) problems.push({ action: 'repaired', reason: 'metadata is not valid JSON (kept as text under _import.invalidMetadata)' })

  const sid = table === 'memories' && r.session_id != null ? cellText(r.session_id) : null
  const uid = table === 'user_memories' && r.user_id != null ? cellText(r.user_id) : null
  return {
    row: {
      id: String(id),
      agent_id: null,
      user_id: uid,
      session_id: sid,
      role,
      kind,
      tier,
      content: r.content,
      summary: null,
      salience,
      created_at: created as number,
      last_used_at: null,
      use_count: useCount,
      turn: null,
      source: 'engram',
      metadata: meta.text,
    },
    problems,
  }
}

const VECTOR_REASON = {
  badVectorShape: 'embedding is not a JSON array of numbers',
  nonFiniteVector: 'embedding has NaN/null/infinite values',
  wrongDimension: 'vector of the wrong dimension',
} as const

/** A derived session's time span widened by one of its memories' creation time. */
function widenSession(sessions: Map<string, { min: number | null; max: number | null }>, id: string, t: number | null): void {
  const s = sessions.get(id) ?? { min: null, max: null }
  if (t !== null) {
    s.min = s.min === null ? t : Math.min(s.min, t)
    s.max = s.max === null ? t : Math.max(s.max, t)
  }
  sessions.set(id, s)
}

/** Engram's graph tables are not imported (the canonical schema has no graph): the report says how much is left behind. */
function noteGraphTables(src: Database.Database, tables: Map<string, Set<string>>, rb: ReportBuilder): void {
  const nodes = tables.has('graph_nodes') ? (src.prepare(`SELECT count(*) FROM graph_nodes`).pluck().get() as number) : 0
  const edges = tables.has('graph_edges') ? (src.prepare(`SELECT count(*) FROM graph_edges`).pluck().get() as number) : 0
  if (nodes || edges)
    rb.notes.push(
      `graph tables not imported (${nodes} node${nodes === 1 ? '' : 's'}, ${edges} edge${edges === 1 ? '' : 's'}): the canonical schema has no graph`,
    )
}

export async function importEngram(opts: ImportOptions): Promise<ImportReport> {
  const t0 = performance.now()
  const { input, output } = checkPaths(opts)
  assertSqliteFile(input)
  let src: Database.Database
  try {
    src = openReadOnlyAgentDb(input, { fileMustExist: true })
    src.pragma('query_only = 1')
  } catch (e) {
    throw new RecallscopeError('NOT_SQLITE', `Cannot open ${input}: ${(e as Error).message}`)
  }
  try {
    const tables = readTables(src)
    const source = engramAdapter.detect(src, tables)
    if (!source) {
      const hint = tables.get('memories')?.has('created_at') ? ' (it looks canonical already: open it directly)' : ''
      throw new RecallscopeError('UNKNOWN_LAYOUT', `${input} is not an Engram memory file${hint} (tables: ${[...tables.keys()].join(', ') || 'none'})`)
    }
    const model = opts.model ?? DEFAULT_ENGRAM_MODEL
    const embed = opts.embed ?? 'none'
    const rb = new ReportBuilder(opts.maxIssues)
    const memCols = tables.get('memories')!
    const userCols = tables.get('user_memories')
    const parts: { table: EngramTable; cols: Set<string> }[] = [{ table: 'memories', cols: memCols }]
    // Same condition as the adapter: a user_memories table it can read.
    if (userCols && userCols.has('user_id') && userCols.has('content') && userCols.has('timestamp')) parts.push({ table: 'user_memories', cols: userCols })
    const total = parts.reduce((n, p) => n + (src.prepare(`SELECT count(*) FROM ${p.table}`).pluck().get() as number), 0)
    const tick = makeTicker(opts, total)

    const { result, workspace } = await withOutput(
      output,
      opts,
      false,
      async (w) => {
        const exists = w.db.prepare(`SELECT 1 FROM memories WHERE id = ?`).pluck()
        const sessions = new Map<string, { min: number | null; max: number | null }>()
        const userIds = new Set<string>()
        let memories = 0
        let done = 0
        let noVector = 0
        for (const { table, cols } of parts) {
          const hasEmb = cols.has('embedding')
          for (const r of src.prepare(`SELECT * FROM ${table} ORDER BY rowid`).iterate() as Iterable<Record<string, unknown>>) {
            done++
            const at = { table, id: r.id == null ? undefined : cellText(r.id) }
            const m = mapEngramRow(r, table, cols)
            if ('skip' in m) {
              rb.skip(m.skip, at)
            } else if (exists.get(m.row.id)) {
              rb.skip('duplicate id (first kept)', at)
            } else {
              for (const p of m.problems) rb.add({ ...p, ...at })
              w.memory(m.row)
              memories++
              if (table === 'user_memories') userIds.add(m.row.id)
              if (m.row.session_id !== null) widenSession(sessions, m.row.session_id, m.row.created_at)
              const raw = hasEmb ? r.embedding : null
              if (raw == null) noVector++
              else {
                const v = decodeVector(raw, null)
                if (typeof v === 'string') rb.skip(VECTOR_REASON[v], { ...at, detail: preview(raw) })
                else w.embedding('memory', m.row.id, model, v)
              }
              if (embed === 'hashing') w.embedding('memory', m.row.id, HASHING_MODEL, hashEmbed(m.row.content))
            }
            await tick(done, 'memories')
          }
        }
        // Sessions are derived, as Engram has no sessions table (and as the adapter derives them).
        for (const [id, s] of sessions)
          w.session({ id, agent_id: null, user_id: null, tenant_id: null, started_at: s.min, ended_at: s.max, summary: null, is_archived: 0 })
        const models = pruneMinorityDims(w.db, rb, (_ot, id) => ({ table: userIds.has(id) ? 'user_memories' : 'memories', id }))
        if (noVector) rb.notes.push(`${noVector} memories have no stored embedding (Engram writes NULL when its embedder was down)`)
        noteGraphTables(src, tables, rb)
        const embeddings = models.reduce((n, m) => n + m.count, 0)
        return { memories, sessions: sessions.size, embeddings, models }
      },
      () => `${input} has no Engram memories to import`,
    )
    return rb.build({
      importer: 'engram',
      input,
      output,
      workspace,
      layout: source.layout,
      written: { memories: result.memories, sessions: result.sessions, embeddings: result.embeddings, evalCases: 0 },
      models: result.models,
      tookMs: Math.round(performance.now() - t0),
    })
  } finally {
    src.close()
  }
}

function preview(raw: unknown): string {
  const s = typeof raw === 'string' ? raw : Buffer.isBuffer(raw) ? `<${raw.length} bytes>` : String(raw)
  return s.length > 60 ? `${s.slice(0, 57)}...` : s
}

export const engramImporter: Importer = {
  name: 'engram',
  summary: 'Engram SQLite file (v0.2 / v0.5 / v1.0): memories + user_memories, JSON embeddings → float32',
  defaultEmbed: 'none',
  usesModel: true,
  run: importEngram,
}
