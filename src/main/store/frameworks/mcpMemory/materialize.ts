/**
 * The official MCP knowledge-graph memory server (`@modelcontextprotocol/server-memory`), read in place.
 *
 * Source read: github.com/modelcontextprotocol/servers `src/memory/index.ts`, as published in npm
 * `@modelcontextprotocol/server-memory` 2026.8.31 (`dist/index.js`, KnowledgeGraphManager.loadGraph /
 * saveGraph): `memory.jsonl` (path from MEMORY_FILE_PATH), one JSON object per line —
 *   {"type":"entity","name","entityType","observations":[string…]}
 *   {"type":"relation","from","to","relationType"}
 * Entity names are unique (createEntities skips existing names), observations are unique per entity,
 * relations unique per (from, to, relationType). No timestamps, ids, vectors or scope are stored.
 *
 * What maps to what (materialized into an in-memory canonical DB; the file is only read):
 *  - each observation → a memory: content = the observation, summary = "<name> (<entityType>)",
 *    kind 'semantic', tier 'long_term', turn = its position in the entity's list, source 'mcp-memory',
 *    id = "<entity name>#<first 10 hex of sha1(observation)>" (stable while the text is unchanged);
 *    metadata = { entity, entityType, relations: the first 50 relations from or to the entity,
 *    relationCount: all of them } (bounded: a hub entity's relations are not copied in full into each
 *    observation).
 *  - each entity → a session (id = its name, summary = its type and relations), so the Sessions view
 *    lists entities with their observation counts and session-mode recall replays one entity.
 *  - created_at = the file's modification time for every memory (the format keeps no time).
 * Not shown: entities with no observation are not memories (their relations still appear on the
 * entities at the other end); agent/user scope (the graph is one shared store); lines that are not
 * JSON objects of a known type are skipped and counted in detectedBecause.
 */
import crypto from 'node:crypto'
import fs from 'node:fs'
import path from 'node:path'
import Database from 'better-sqlite3'
import { RecallscopeError } from '../../../../shared/result'
import { CANONICAL_MIGRATIONS } from '../../sqlite/schema'
import type { Materialized, Materializer } from '../materialize'
import { openRegularFile, readRegularFile } from '../../safeFiles'
import { observationId } from './ids'

const MCP_MEMORY_FILE = 'memory.jsonl'

interface Entity {
  name: string
  entityType: string
  observations: string[]
}
interface Relation {
  from: string
  to: string
  relationType: string
}

/** Parse memory.jsonl the way loadGraph does, but skipping (and counting) bad lines instead of failing. */
function parseGraph(text: string): { entities: Entity[]; relations: Relation[]; skipped: number } {
  const entities: Entity[] = []
  const relations: Relation[] = []
  const seen = new Set<string>()
  let skipped = 0
  for (const line of text.split('\n')) {
    if (line.trim() === '') continue
    let item: Record<string, unknown>
    try {
      const v = JSON.parse(line) as unknown
      if (!v || typeof v !== 'object' || Array.isArray(v)) throw new Error('not an object')
      item = v as Record<string, unknown>
    } catch {
      skipped++
      continue
    }
    if (item.type === 'entity' && typeof item.name === 'string' && !seen.has(item.name)) {
      seen.add(item.name)
      const obs = Array.isArray(item.observations) ? item.observations.filter((o): o is string => typeof o === 'string') : []
      entities.push({ name: item.name, entityType: typeof item.entityType === 'string' ? item.entityType : '', observations: [...new Set(obs)] })
    } else if (item.type === 'relation' && typeof item.from === 'string' && typeof item.to === 'string' && typeof item.relationType === 'string') {
      relations.push({ from: item.from, to: item.to, relationType: item.relationType })
    } else skipped++
  }
  return { entities, relations, skipped }
}

function firstLine(file: string): string | null {
  try {
    const fd = openRegularFile(file)
    try {
      const buf = Buffer.alloc(64 * 1024)
      const n = fs.readSync(fd, buf, 0, buf.length, 0)
      const text = buf.subarray(0, n).toString('utf8')
      return text.split('\n').find((l) => l.trim() !== '') ?? ''
    } finally {
      fs.closeSync(fd)
    }
  } catch {
    return null
  }
}

function sniff(p: string): boolean {
  let st: fs.Stats
  try {
    st = fs.statSync(p)
  } catch {
    return false
  }
  if (!st.isFile() || !/\.jsonl?$/i.test(p)) return false
  const line = firstLine(p)
  if (line === null) return false
  // An empty memory.jsonl is a graph with nothing in it yet.
  if (line === '') return path.basename(p) === MCP_MEMORY_FILE
  try {
    const v = JSON.parse(line) as { type?: unknown }
    return v !== null && typeof v === 'object' && (v.type === 'entity' || v.type === 'relation')
  } catch {
    return false
  }
}

/** Relations kept on each observation and in the entity's summary; relationCount has the total. */
const RELATIONS_SHOWN = 50

function materialize(p: string, opts: { nativeBinding?: string }): Materialized {
  let text: string
  try {
    text = readRegularFile(p, 'memory file').toString('utf8')
  } catch (e) {
    if (e instanceof RecallscopeError) throw e
    throw new RecallscopeError('NOT_FOUND', `Cannot read ${p}: ${(e as Error).message}`)
  }
  const mtime = Math.round(fs.statSync(p).mtimeMs)
  const g = parseGraph(text)
  const db = new Database(':memory:', opts.nativeBinding ? { nativeBinding: opts.nativeBinding } : {})
  db.exec(CANONICAL_MIGRATIONS[0])
  // Pushed in place (a spread per relation was O(R²): 40,000 relations on one entity took 40 s).
  const byEntity = new Map<string, Relation[]>()
  for (const r of g.relations) {
    for (const end of r.from === r.to ? [r.from] : [r.from, r.to]) {
      const list = byEntity.get(end)
      if (list) list.push(r)
      else byEntity.set(end, [r])
    }
  }
  const insS = db.prepare(`INSERT INTO sessions (id, started_at, ended_at, summary, is_archived) VALUES (?, ?, ?, ?, 0)`)
  const insM = db.prepare(
    `INSERT INTO memories (id, session_id, kind, tier, content, summary, created_at, turn, source, metadata) VALUES (?, ?, 'semantic', 'long_term', ?, ?, ?, ?, 'mcp-memory', ?)`,
  )
  let observations = 0
  db.transaction(() => {
    for (const e of g.entities) {
      if (e.observations.length === 0) continue
      const all = byEntity.get(e.name) ?? []
      // Every observation carries its entity's relations, so a hub entity with thousands of
      // relations would be copied into each of its observations (O(observations × relations)):
      // the first RELATIONS_SHOWN are kept, with the full count.
      const rels = all.slice(0, RELATIONS_SHOWN)
      const more = all.length - rels.length
      const relText = rels.map((r) => `${r.from} ${r.relationType} ${r.to}`).join('; ') + (more > 0 ? `; … ${more} more` : '')
      insS.run(e.name, mtime, mtime, `${e.entityType}${relText ? ` — ${relText}` : ''}`)
      const meta = JSON.stringify({ entity: e.name, entityType: e.entityType, relations: rels, relationCount: all.length })
      e.observations.forEach((o, i) => {
        insM.run(observationId(e.name, o), e.name, o, `${e.name} (${e.entityType})`, mtime, i, meta)
        observations++
      })
    }
  })()
  const skipped = g.skipped ? `; ${g.skipped} line(s) skipped (not a JSON entity or relation)` : ''
  return {
    db,
    layout: 'mcp-memory',
    // Row keys follow file order: any edit can move them.
    ftsKey: crypto.createHash('sha1').update(text).digest('hex').slice(0, 16),
    detectedBecause: `MCP knowledge-graph memory (${path.basename(p)}): JSONL with ${g.entities.length} entity and ${g.relations.length} relation line(s), ${observations} observation(s)${skipped}`,
  }
}

export const mcpMemoryMaterializer: Materializer = {
  name: 'mcp-memory',
  sniff,
  materialize,
  lookedFor: `MCP knowledge-graph memory: ${MCP_MEMORY_FILE} (JSONL lines of {"type":"entity"|"relation", …})`,
}

/** A folder holding memory.jsonl → that file. */
export function resolveMcpMemoryFolder(dir: string): string | null {
  const p = path.join(dir, MCP_MEMORY_FILE)
  return fs.existsSync(p) && sniff(p) ? p : null
}
