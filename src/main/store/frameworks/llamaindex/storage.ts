/**
 * LlamaIndex default storage (`StorageContext.persist(persist_dir="./storage")`), read in place.
 *
 * Files read, as llama-index-core writes them (storage/docstore/simple_docstore.py over
 * storage/kvstore/simple_kvstore.py; vector_stores/simple.py SimpleVectorStoreData;
 * storage/index_store/simple_index_store.py):
 *   docstore.json              {"docstore/data": {node_id: {"__data__": TextNode.to_dict(), "__type__": "1"}},
 *                               "docstore/metadata": {node_id: {"doc_hash", "ref_doc_id"?}},
 *                               "docstore/ref_doc_info": {ref_doc_id: {"node_ids": [...], "metadata": {...}}}}
 *   default__vector_store.json {"embedding_dict": {node_id: [float…]}, "text_id_to_ref_doc_id": {...},
 *                               "metadata_dict": {...}}
 *   index_store.json           {"index_store/data": {index_id: {"__type__", "__data__": "<json>"}}}
 * A TextNode's dict has id_, text, metadata, relationships ({"1": {node_id, …}} — "1" is
 * NodeRelationship.SOURCE, the document the node was cut from), embedding (usually null: the vector
 * lives in the vector store), start_char_idx / end_char_idx, class_name.
 *
 * Canonical mapping: node id → id (what OpenInference retrieval spans report as document ids) ·
 * text → content · the source document (relationships["1"].node_id, else docstore/metadata
 * ref_doc_id) → session, one session per document, its file_name / title as summary · metadata →
 * metadata (plus char range and class) · created_at = metadata creation_date / last_modified_date
 * when a reader set one, else docstore.json's modification time (marked `created_from_mtime`) ·
 * kind 'semantic', tier 'long_term', source 'llamaindex' · embedding_dict (else the node's own
 * embedding) → vectors labelled `llamaindex:<dim>` (the files do not record the model).
 * Not shown: nodes of other types (images, index nodes: no text), graph_store.json (a knowledge
 * graph, not memories), other vector stores' files (`<namespace>__vector_store.json` other than
 * default are listed in detectedBecause).
 */
import fs from 'node:fs'
import path from 'node:path'
import { RecallscopeError } from '../../../../shared/result'
import { parseJsonSafe } from '../../../safety/json'
import { MemoryDbBuilder, toEpochMs, type Materialized, type Materializer } from '../materialize'
import { readRegularFile } from '../../safeFiles'

const DOCSTORE = 'docstore.json'
const VECTORS = 'default__vector_store.json'
const INDEX = 'index_store.json'
/** JSON.parse needs the whole text in memory (and V8 caps a string near 512 MiB): refuse bigger files, typed. */
const MAX_FILE_BYTES = 400 * 1024 * 1024

type Obj = Record<string, unknown>
const isObj = (v: unknown): v is Obj => !!v && typeof v === 'object' && !Array.isArray(v)

/** The storage folder for a path: the folder itself, or its `storage/` child. */
function storageDir(p: string): string | null {
  const has = (d: string) => {
    try {
      return fs.statSync(path.join(d, DOCSTORE)).isFile() && (fs.existsSync(path.join(d, VECTORS)) || fs.existsSync(path.join(d, INDEX)))
    } catch {
      return false
    }
  }
  try {
    if (!fs.statSync(p).isDirectory()) return null
  } catch {
    return null
  }
  if (has(p)) return p
  const sub = path.join(p, 'storage')
  return has(sub) ? sub : null
}

function readJsonFile(file: string): Obj | null {
  let st: fs.Stats
  try {
    st = fs.statSync(file)
  } catch {
    return null
  }
  if (!st.isFile()) throw new RecallscopeError('BAD_INPUT', `${file} is not a regular file`)
  if (st.size > MAX_FILE_BYTES)
    throw new RecallscopeError(
      'BAD_INPUT',
      `${file} is ${Math.round(st.size / 2 ** 20)} MiB: LlamaIndex JSON storage over ${MAX_FILE_BYTES / 2 ** 20} MiB is not read`,
    )
  const parsed = parseJsonSafe(readRegularFile(file, 'LlamaIndex store file').toString('utf8'))
  if (!parsed.ok || !isObj(parsed.value))
    throw new RecallscopeError('BAD_INPUT', `${file} is not a LlamaIndex JSON store (${parsed.ok ? 'not an object' : parsed.reason})`)
  return parsed.value
}

const str = (v: unknown): string | null => (typeof v === 'string' && v !== '' ? v : null)

/** A node's source document id. */
function refDocOf(id: string, data: Obj, meta: Obj): string | null {
  const rel = isObj(data.relationships) ? data.relationships['1'] : null
  return (isObj(rel) ? str(rel.node_id) : null) ?? (isObj(meta[id]) ? str(meta[id].ref_doc_id) : null)
}

function vectorOf(v: unknown): number[] | null {
  if (!Array.isArray(v) || v.length === 0) return null
  for (const x of v) if (typeof x !== 'number' || !Number.isFinite(x)) return null
  return v as number[]
}

function materializeLlamaIndex(p: string, opts: { nativeBinding?: string } = {}): Materialized {
  const dir = storageDir(p)
  if (!dir) throw new RecallscopeError('NOT_FOUND', `${p} holds no LlamaIndex storage (${DOCSTORE} beside ${VECTORS} or ${INDEX})`)
  const doc = readJsonFile(path.join(dir, DOCSTORE))!
  const vec = readJsonFile(path.join(dir, VECTORS))
  const data = isObj(doc['docstore/data']) ? doc['docstore/data'] : {}
  const meta = isObj(doc['docstore/metadata']) ? doc['docstore/metadata'] : {}
  const refInfo = isObj(doc['docstore/ref_doc_info']) ? doc['docstore/ref_doc_info'] : {}
  const embeddings = vec && isObj(vec.embedding_dict) ? vec.embedding_dict : {}
  const mtime = Math.round(fs.statSync(path.join(dir, DOCSTORE)).mtimeMs)

  const b = new MemoryDbBuilder(opts.nativeBinding)
  let skipped = 0
  let nodes = 0
  let vectors = 0
  let badVectors = 0
  const sessions = new Map<string, { first: number; last: number; title: string | null }>()
  b.batch(() => {
    for (const [id, entry] of Object.entries(data)) {
      const node = isObj(entry) ? (isObj(entry.__data__) ? entry.__data__ : entry) : null
      const text = node ? node.text : undefined
      if (!node || typeof text !== 'string') {
        skipped++
        continue
      }
      const md = isObj(node.metadata) ? node.metadata : {}
      const dated = toEpochMs(md.creation_date) ?? toEpochMs(md.last_modified_date)
      const createdAt = dated ?? mtime
      const ref = refDocOf(id, node, meta)
      nodes++
      b.memory({
        id,
        content: text,
        session_id: ref,
        kind: 'semantic',
        tier: 'long_term',
        source: 'llamaindex',
        created_at: createdAt,
        turn: nodes,
        metadata: JSON.stringify({
          metadata: md,
          class_name: str(node.class_name),
          start_char_idx: node.start_char_idx ?? null,
          end_char_idx: node.end_char_idx ?? null,
          ...(dated === null ? { created_from_mtime: true } : {}),
        }),
      })
      if (ref) {
        const s = sessions.get(ref)
        const info = isObj(refInfo[ref]) && isObj(refInfo[ref].metadata) ? refInfo[ref].metadata : md
        const title = str(info.file_name) ?? str(info.title) ?? str(info.file_path)
        if (!s) sessions.set(ref, { first: createdAt, last: createdAt, title })
        else {
          s.first = Math.min(s.first, createdAt)
          s.last = Math.max(s.last, createdAt)
        }
      }
      const v = vectorOf(embeddings[id]) ?? vectorOf(node.embedding)
      if (v) {
        b.embedding('memory', id, `llamaindex:${v.length}`, v)
        vectors++
      } else if (embeddings[id] !== undefined) badVectors++
    }
    for (const [id, s] of sessions) b.session({ id, started_at: s.first, ended_at: s.last, summary: s.title })
  })
  const others = fs.readdirSync(dir).filter((n) => n.endsWith('__vector_store.json') && n !== VECTORS)
  const why = [`${DOCSTORE} (${nodes} text nodes${skipped ? `, ${skipped} entries without text skipped` : ''})`]
  if (vec) why.push(`${VECTORS} (${vectors} vectors${badVectors ? `, ${badVectors} malformed skipped` : ''})`)
  if (others.length) why.push(`not read: ${others.join(', ')}`)
  return { db: b.done(), layout: 'llamaindex', detectedBecause: `LlamaIndex storage in ${dir}: ${why.join('; ')}`, ftsKey: b.fingerprint() }
}

export const llamaIndexMaterializer: Materializer = {
  name: 'llamaindex',
  lookedFor: 'LlamaIndex: a storage folder with docstore.json + default__vector_store.json / index_store.json',
  sniff: (p) => storageDir(p) !== null,
  materialize: materializeLlamaIndex,
}
