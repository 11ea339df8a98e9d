/**
 * Chroma persistent storage (`chromadb.PersistentClient(path=…)`; CrewAI knowledge/RAG storage,
 * AutoGen ChromaDBVectorMemory, MemGPT 0.3 archival, LangChain apps), read in place.
 *
 * Layout read from chroma-core/chroma chromadb/migrations (sysdb/, metadb/, embeddings_queue/) and
 * chromadb/segment/impl/vector/local_persistent_hnsw.py:
 *   chroma.sqlite3   collections(id, name, dimension, …) · segments(id, type, scope 'VECTOR'|'METADATA',
 *                    collection) · embeddings(id INTEGER PK, segment_id → the METADATA segment,
 *                    embedding_id TEXT (the user's id), seq_id, created_at CURRENT_TIMESTAMP) ·
 *                    embedding_metadata(id → embeddings.id, key, string_value, int_value, float_value,
 *                    bool_value), the document under key `chroma:document` · embeddings_queue(seq_id,
 *                    created_at, operation, topic, id, vector BLOB float32, encoding, metadata)
 *   <VECTOR segment id>/  the HNSW files (hnsw.ts)
 * Since Chroma 0.5.6 the queue is pruned once applied, so vectors come from the HNSW files; a
 * vector still waiting in the queue (added but not yet flushed) is taken from there.
 *
 * Canonical mapping: embedding_id → id (`<collection>/<id>` when several collections are open
 * together) · `chroma:document` → content · the collection's name → agent (one facet per
 * collection) · embeddings.created_at → created · kind 'semantic', tier 'long_term', source
 * 'chroma' · the other metadata keys → metadata · vectors → `chroma:<collection>:<dim>` (Chroma
 * stores the embedding function's name only in newer collection configs; not read).
 * Not shown: records without a document (embeddings only: no text to show; counted), the
 * full-text index (recallscope builds its own), collection metadata and HNSW settings.
 */
import fs from 'node:fs'
import path from 'node:path'
import type Database from 'better-sqlite3'
import { RecallscopeError } from '../../../../shared/result'
import { openSqlite, readTables } from '../../sqlite/connection'
import { MemoryDbBuilder, toEpochMs, type Materialized, type Materializer } from '../materialize'
import { readHnswSegment } from './hnsw'

const FILE = 'chroma.sqlite3'
const DOC_KEY = 'chroma:document'

/** The chroma.sqlite3 of a path (the file, or the persist folder holding it). */
function chromaFile(p: string): string | null {
  try {
    const st = fs.statSync(p)
    const file = st.isDirectory() ? path.join(p, FILE) : path.basename(p) === FILE ? p : null
    return file && fs.statSync(file).isFile() ? file : null
  } catch {
    return null
  }
}

interface Collection {
  id: string
  name: string
  metaSegment: string | null
  vectorSegment: string | null
}

function collectionsOf(db: Database.Database): Collection[] {
  const cols = db.prepare(`SELECT id, name FROM collections ORDER BY name`).all() as { id: string; name: string }[]
  const segs = db.prepare(`SELECT id, scope, collection FROM segments`).all() as { id: string; scope: string; collection: string }[]
  return cols.map((c) => ({
    id: c.id,
    name: c.name,
    metaSegment: segs.find((s) => s.collection === c.id && s.scope === 'METADATA')?.id ?? null,
    vectorSegment: segs.find((s) => s.collection === c.id && s.scope === 'VECTOR')?.id ?? null,
  }))
}

/** Vectors still waiting in embeddings_queue (newest per id), by collection topic/segment; empty when the table is gone. */
function queuedVectors(db: Database.Database, tables: Map<string, Set<string>>): Map<string, Float32Array> {
  const q = tables.get('embeddings_queue')
  const out = new Map<string, Float32Array>()
  if (!q || !q.has('vector') || !q.has('id')) return out
  const rows = db.prepare(`SELECT id, vector FROM embeddings_queue WHERE vector IS NOT NULL ORDER BY seq_id`).iterate() as IterableIterator<{
    id: string
    vector: unknown
  }>
  for (const r of rows)
    if (r.vector instanceof Uint8Array && r.vector.byteLength % 4 === 0 && r.vector.byteLength > 0)
      out.set(String(r.id), new Float32Array(r.vector.buffer.slice(r.vector.byteOffset, r.vector.byteOffset + r.vector.byteLength)))
  return out
}

function materializeChroma(p: string, opts: { nativeBinding?: string } = {}): Materialized {
  const file = chromaFile(p)
  if (!file) throw new RecallscopeError('NOT_FOUND', `${p} holds no ${FILE}`)
  const dir = path.dirname(file)
  const db = openSqlite(file, { nativeBinding: opts.nativeBinding })
  const b = new MemoryDbBuilder(opts.nativeBinding)
  const parts: string[] = []
  try {
    const tables = readTables(db)
    for (const t of ['collections', 'segments', 'embeddings', 'embedding_metadata'])
      if (!tables.has(t)) throw new RecallscopeError('UNKNOWN_LAYOUT', `${file} has no ${t} table: not a Chroma persistent store`)
    const hasBool = tables.get('embedding_metadata')!.has('bool_value')
    const collections = collectionsOf(db)
    const queued = queuedVectors(db, tables)
    const rowsOf = db.prepare(
      `SELECT e.id AS rid, e.embedding_id AS eid, e.created_at AS created_at, m.key AS key, m.string_value AS s, m.int_value AS i, m.float_value AS f,
         ${hasBool ? 'm.bool_value' : 'NULL'} AS b
       FROM embeddings e LEFT JOIN embedding_metadata m ON m.id = e.id
       WHERE e.segment_id = ? ORDER BY e.id`,
    )
    b.batch(() => {
      for (const c of collections) {
        if (!c.metaSegment) continue
        // a segment id names a folder inside this one: never a path elsewhere
        const hnsw = c.vectorSegment && /^[\w-]+$/.test(c.vectorSegment) ? readHnswSegment(path.join(dir, c.vectorSegment)) : null
        const prefix = collections.length > 1
        let rows = 0
        let noText = 0
        let vectors = 0
        let cur: { rid: number; eid: string; created: unknown; doc: string | null; meta: Record<string, unknown> } | null = null
        const flush = () => {
          if (!cur) return
          if (cur.doc === null) noText++
          else {
            const id = prefix ? `${c.name}/${cur.eid}` : cur.eid
            b.memory({
              id,
              content: cur.doc,
              agent_id: c.name,
              kind: 'semantic',
              tier: 'long_term',
              source: 'chroma',
              created_at: toEpochMs(cur.created) ?? 0,
              metadata: JSON.stringify({ collection: c.name, metadata: cur.meta }),
            })
            rows++
            const v = hnsw?.vectors.get(cur.eid) ?? queued.get(cur.eid)
            if (v && v.some((x) => x !== 0)) {
              b.embedding('memory', id, `chroma:${c.name}:${v.length}`, v)
              vectors++
            }
          }
          cur = null
        }
        for (const r of rowsOf.iterate(c.metaSegment) as IterableIterator<{
          rid: number
          eid: string
          created_at: unknown
          key: string | null
          s: string | null
          i: number | null
          f: number | null
          b: number | null
        }>) {
          if (!cur || cur.rid !== r.rid) {
            flush()
            cur = { rid: r.rid, eid: String(r.eid), created: r.created_at, doc: null, meta: {} }
          }
          if (r.key === null) continue
          if (r.key === DOC_KEY) cur.doc = r.s
          else cur.meta[r.key] = r.s ?? r.i ?? r.f ?? (r.b === null ? null : r.b === 1)
        }
        flush()
        const notes = [
          noText && `${noText} without a document skipped`,
          hnsw?.problem && `vectors: ${hnsw.problem}`,
          hnsw?.deleted && `${hnsw.deleted} deleted in the index`,
        ].filter(Boolean)
        parts.push(`${c.name} (${rows} records, ${vectors} vectors${notes.length ? `; ${notes.join('; ')}` : ''})`)
      }
    })
  } finally {
    db.close()
  }
  return {
    db: b.done(),
    layout: 'chroma',
    detectedBecause: `Chroma persistent store (${FILE}${parts.length ? `: ${parts.join(', ')}` : ', no collections'})`,
    ftsKey: b.fingerprint(),
  }
}

export const chromaMaterializer: Materializer = {
  name: 'chroma',
  lookedFor: 'Chroma: a persist folder with chroma.sqlite3 (+ HNSW segment folders)',
  sniff: (p) => chromaFile(p) !== null,
  materialize: materializeChroma,
}
