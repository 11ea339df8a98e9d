/**
 * Qdrant local mode (`QdrantClient(path=…)`; mem0 Python's default vector store at
 * /tmp/qdrant), read in place without running any of its pickles.
 *
 * Layout read from qdrant/qdrant-client qdrant_client/local/qdrant_local.py (META_INFO_FILENAME,
 * _load/_save, _collection_path) and local/persistence.py (CollectionPersistence) @ 071b1905:
 *   <path>/meta.json                          {"collections": {name: CreateCollection as a dict}, "aliases": {…}}
 *   <path>/collection/<name>/storage.sqlite   points(id TEXT PRIMARY KEY, point BLOB)
 * `id` is base64(pickle.dumps(point id)), `point` is pickle.dumps(PointStruct): a pydantic
 * model whose fields are id (int or str), vector (a list of floats, or {name: list} for named
 * vectors, sparse vectors as {indices, values}) and payload (a dict). The pickles are read by
 * pickle.ts, which builds plain values and never imports or calls anything.
 *
 * Canonical mapping, per point of every collection:
 *   point id → id (prefixed `<collection>/` when several collections are open together) ·
 *   content = the payload's text: `data` (mem0), else `page_content` (LangChain), `text`,
 *   `content`, `document`, `memory`, or the `text` of LlamaIndex's `_node_content` JSON ·
 *   user_id / agent_id / run_id (mem0; camelCase too) → user / agent / session ·
 *   created_at / createdAt (ISO, mem0) → created (else meta.json's modification time, marked) ·
 *   kind 'semantic', tier 'long_term', source 'qdrant' · metadata = { collection, payload without
 *   the text } · dense vectors → embeddings labelled `qdrant:<collection>:<dim>` (named ones
 *   `qdrant:<collection>:<name>:<dim>`; Qdrant does not record the model).
 * Not shown: points with no text in their payload (counted), sparse vectors, and the
 * collections' HNSW/quantization settings (local mode does exact search anyway).
 */
import fs from 'node:fs'
import path from 'node:path'
import { RecallscopeError } from '../../../../shared/result'
import { parseJsonSafe } from '../../../safety/json'
import { openSqlite } from '../../sqlite/connection'
import { idText, MemoryDbBuilder, toEpochMs, type Materialized, type Materializer } from '../materialize'
import { fieldsOf, readPickle } from './pickle'
import { readRegularFile } from '../../safeFiles'

const META = 'meta.json'
const TEXT_KEYS = ['data', 'page_content', 'text', 'content', 'document', 'memory'] as const
/** Keys of a payload that say who and when (mem0 writes snake_case in Python, camelCase in TS). */
const SCOPE_KEYS = { user: ['user_id', 'userId'], agent: ['agent_id', 'agentId'], session: ['run_id', 'runId'], created: ['created_at', 'createdAt'] }

type Obj = Record<string, unknown>
const isObj = (v: unknown): v is Obj => !!v && typeof v === 'object' && !Array.isArray(v)

/** The Qdrant local folder for a path: it, or its parent when given meta.json itself. */
function qdrantDir(p: string): string | null {
  try {
    const st = fs.statSync(p)
    const dir = st.isDirectory() ? p : path.basename(p) === META ? path.dirname(p) : null
    if (!dir) return null
    if (!fs.statSync(path.join(dir, META)).isFile()) return null
    return fs.statSync(path.join(dir, 'collection')).isDirectory() ? dir : null
  } catch {
    return null
  }
}

function readMeta(dir: string): Obj {
  const file = path.join(dir, META)
  if (fs.statSync(file).size > 64 * 1024 * 1024) throw new RecallscopeError('BAD_INPUT', `${file} is too large for a Qdrant meta.json`)
  const parsed = parseJsonSafe(readRegularFile(file, 'Qdrant meta.json').toString('utf8'))
  if (!parsed.ok || !isObj(parsed.value) || !isObj(parsed.value.collections))
    throw new RecallscopeError('BAD_INPUT', `${file} is not Qdrant local's meta.json (no "collections" object)`)
  return parsed.value
}

const first = (o: Obj, keys: readonly string[]): unknown => {
  for (const k of keys) if (o[k] !== undefined && o[k] !== null) return o[k]
  return undefined
}

/** The payload's text and the key it came from. */
function textOf(payload: Obj): { text: string; key: string } | null {
  for (const k of TEXT_KEYS) if (typeof payload[k] === 'string') return { text: payload[k], key: k }
  if (typeof payload._node_content === 'string') {
    const n = parseJsonSafe(payload._node_content)
    if (n.ok && isObj(n.value) && typeof n.value.text === 'string') return { text: n.value.text, key: '_node_content' }
  }
  return null
}

/** Dense vectors of a point: [name | null, floats]. Sparse and malformed ones are left out (counted by the caller). */
function vectorsOf(v: unknown): { named: [string | null, number[]][]; bad: number } {
  const dense = (x: unknown): number[] | null =>
    Array.isArray(x) && x.length > 0 && x.every((f) => typeof f === 'number' && Number.isFinite(f)) ? (x as number[]) : null
  if (v === null || v === undefined) return { named: [], bad: 0 }
  const d = dense(v)
  if (d) return { named: [[null, d]], bad: 0 }
  if (isObj(v)) {
    const named: [string, number[]][] = []
    let bad = 0
    for (const [name, x] of Object.entries(v)) {
      const dx = dense(x)
      if (dx) named.push([name, dx])
      else if (!(isObj(x) || isObj(fieldsOf(x)))) bad++ // sparse vectors (objects) are not dense: not counted as bad
    }
    return { named, bad }
  }
  return { named: [], bad: 1 }
}

interface CollectionRead {
  name: string
  points: number
  noText: number
  badPickles: number
  badVectors: number
}

function readCollection(b: MemoryDbBuilder, dir: string, name: string, prefix: boolean, fallbackCreated: number, nativeBinding?: string): CollectionRead {
  const out: CollectionRead = { name, points: 0, noText: 0, badPickles: 0, badVectors: 0 }
  const file = path.join(dir, 'collection', name, 'storage.sqlite')
  let st: fs.Stats
  try {
    st = fs.statSync(file)
  } catch {
    return out // a collection created but never written
  }
  if (!st.isFile()) throw new RecallscopeError('BAD_INPUT', `${file} is not a regular file`)
  const db = openSqlite(file, { nativeBinding })
  try {
    const rows = db.prepare(`SELECT rowid AS rid, point FROM points ORDER BY rowid`).iterate() as IterableIterator<{ rid: number; point: unknown }>
    for (const r of rows) {
      let fields: Obj | null = null
      try {
        if (r.point instanceof Uint8Array) fields = fieldsOf(readPickle(r.point))
      } catch {
        fields = null
      }
      if (!fields) {
        out.badPickles++
        continue
      }
      const pid = idText(fields.id)
      const payload = isObj(fields.payload) ? fields.payload : {}
      const text = textOf(payload)
      if (pid === null || !text) {
        out.noText++
        continue
      }
      const id = prefix ? `${name}/${pid}` : pid
      const rest: Obj = { ...payload }
      delete rest[text.key]
      const created = toEpochMs(first(payload, SCOPE_KEYS.created))
      b.memory({
        id,
        content: text.text,
        user_id: idText(first(payload, SCOPE_KEYS.user)),
        agent_id: idText(first(payload, SCOPE_KEYS.agent)),
        session_id: idText(first(payload, SCOPE_KEYS.session)),
        kind: 'semantic',
        tier: 'long_term',
        source: 'qdrant',
        created_at: created ?? fallbackCreated,
        metadata: JSON.stringify({ collection: name, payload: rest, ...(created === null ? { created_from_mtime: true } : {}) }),
      })
      out.points++
      const vs = vectorsOf(fields.vector)
      out.badVectors += vs.bad
      for (const [vname, v] of vs.named) b.embedding('memory', id, `qdrant:${name}:${vname ? `${vname}:` : ''}${v.length}`, v)
    }
  } finally {
    db.close()
  }
  return out
}

function materializeQdrant(p: string, opts: { nativeBinding?: string } = {}): Materialized {
  const dir = qdrantDir(p)
  if (!dir) throw new RecallscopeError('NOT_FOUND', `${p} is not a Qdrant local folder (meta.json beside collection/)`)
  const meta = readMeta(dir)
  const names = Object.keys(meta.collections as Obj).sort()
  const mtime = Math.round(fs.statSync(path.join(dir, META)).mtimeMs)
  const b = new MemoryDbBuilder(opts.nativeBinding)
  const reads: CollectionRead[] = []
  b.batch(() => {
    for (const n of names) {
      // a collection name is a folder name inside this one: never a path elsewhere
      if (n.includes('/') || n.includes('\\') || n === '..' || n === '.') continue
      reads.push(readCollection(b, dir, n, names.length > 1, mtime, opts.nativeBinding))
    }
  })
  const parts = reads.map((r) => {
    const extra = [
      r.noText && `${r.noText} without text`,
      r.badPickles && `${r.badPickles} unreadable`,
      r.badVectors && `${r.badVectors} malformed vectors`,
    ].filter(Boolean)
    return `${r.name} (${r.points} points${extra.length ? `; ${extra.join(', ')} skipped` : ''})`
  })
  return {
    db: b.done(),
    layout: 'qdrant-local',
    detectedBecause: `Qdrant local folder (meta.json + collection/*/storage.sqlite): ${parts.join(', ') || 'no collections'}`,
    ftsKey: b.fingerprint(),
  }
}

export const qdrantLocalMaterializer: Materializer = {
  name: 'qdrant-local',
  lookedFor: 'Qdrant local: a folder with meta.json + collection/<name>/storage.sqlite (mem0 Python default /tmp/qdrant)',
  sniff: (p) => qdrantDir(p) !== null,
  materialize: materializeQdrant,
}
