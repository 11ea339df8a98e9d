/**
 * LlamaIndex default storage fixtures, in the shapes llama-index-core persists (Python only, no npm
 * client writes them): SimpleKVStore's docstore.json with TextNode.to_dict() entries under
 * "docstore/data" ({"__data__": …, "__type__": "1"}), "docstore/metadata" and
 * "docstore/ref_doc_info"; SimpleVectorStoreData in default__vector_store.json; the index struct
 * in index_store.json; an empty graph_store.json. Written with json.dumps' default separators.
 */
import fs from 'node:fs'
import path from 'node:path'
import { pyJsonDumps } from './openaiAgents'

export interface LiNode {
  id: string
  text: string
  doc: string
  fileName: string
  creationDate?: string
  embedding: number[] | null
}

export function buildLlamaIndexStorage(dir: string, nodes: LiNode[]): string {
  fs.mkdirSync(dir, { recursive: true })
  const data: Record<string, unknown> = {}
  const meta: Record<string, unknown> = {}
  const refs: Record<string, { node_ids: string[]; metadata: Record<string, unknown> }> = {}
  for (const n of nodes) {
    const md: Record<string, unknown> = { file_name: n.fileName, file_path: `/data/${n.fileName}` }
    if (n.creationDate) md.creation_date = n.creationDate
    data[n.id] = {
      __data__: {
        id_: n.id,
        embedding: null,
        metadata: md,
        excluded_embed_metadata_keys: ['file_name', 'file_path'],
        excluded_llm_metadata_keys: ['file_name'],
        relationships: { '1': { node_id: n.doc, node_type: '4', metadata: md, hash: 'h', class_name: 'RelatedNodeInfo' } },
        metadata_template: '{key}: {value}',
        metadata_separator: '\n',
        text: n.text,
        mimetype: 'text/plain',
        start_char_idx: 0,
        end_char_idx: n.text.length,
        metadata_seperator: '\n',
        text_template: '{metadata_str}\n\n{content}',
        class_name: 'TextNode',
      },
      __type__: '1',
    }
    meta[n.id] = { doc_hash: `hash-${n.id}`, ref_doc_id: n.doc }
    ;(refs[n.doc] ??= { node_ids: [], metadata: md }).node_ids.push(n.id)
  }
  fs.writeFileSync(path.join(dir, 'docstore.json'), pyJsonDumps({ 'docstore/metadata': meta, 'docstore/data': data, 'docstore/ref_doc_info': refs }))
  const emb: Record<string, number[]> = {}
  for (const n of nodes) if (n.embedding) emb[n.id] = n.embedding
  fs.writeFileSync(
    path.join(dir, 'default__vector_store.json'),
    pyJsonDumps({ embedding_dict: emb, text_id_to_ref_doc_id: Object.fromEntries(nodes.map((n) => [n.id, n.doc])), metadata_dict: {} }),
  )
  const struct = JSON.stringify({
    index_id: 'idx-1',
    summary: null,
    nodes_dict: Object.fromEntries(nodes.map((n) => [n.id, n.id])),
    doc_id_dict: {},
    embeddings_dict: {},
  })
  fs.writeFileSync(path.join(dir, 'index_store.json'), pyJsonDumps({ 'index_store/data': { 'idx-1': { __type__: 'vector_store', __data__: struct } } }))
  fs.writeFileSync(path.join(dir, 'graph_store.json'), pyJsonDumps({ graph_dict: {} }))
  return dir
}
