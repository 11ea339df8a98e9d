/**
 * The vectors of a Chroma HNSW segment folder, read from its files (never through hnswlib).
 *
 * Format read from chroma-core/hnswlib (the fork Chroma persists with; hnswalg.h persistHeader /
 * initPersistentIndex / loadPersistedIndex, chroma-hnswlib 0.7.x):
 *   header.bin       int PERSISTENCE_VERSION (1), size_t offsetLevel0, max_elements, cur_element_count,
 *                    size_data_per_element, label_offset, offsetData, int maxlevel, uint32 enterpoint,
 *                    size_t maxM, maxM0, M, double mult, size_t ef_construction (little-endian, 100 bytes)
 *   data_level0.bin  max_elements blocks of size_data_per_element bytes: the level-0 link list
 *                    (uint32 count — its third byte carries the deleted mark 0x01 — then maxM0 uint32),
 *                    at offsetData the vector (float32 × dim), at label_offset the label (size_t)
 * and the label → embedding id map from `index_metadata.pickle` (Python Chroma: a pickled
 * PersistentData; Chroma 1.x: the same fields through serde_pickle), read by the non-executing
 * pickle reader. Elements marked deleted are left out. In a `cosine` space hnswlib stores the
 * vectors normalised: their direction, and so every cosine, is what the user embedded.
 */
import fs from 'node:fs'
import path from 'node:path'
import { fieldsOf, readPickle } from '../qdrantLocal/pickle'
import { openRegularFile, readRegularFile } from '../../safeFiles'

const HEADER_BYTES = 100
const DELETE_MARK = 0x01

export interface HnswVectors {
  /** embedding id → vector */
  vectors: Map<string, Float32Array>
  dim: number
  deleted: number
  /** why no vector could be read (missing files, a header that does not add up) */
  problem: string | null
}

function regularFile(file: string): fs.Stats | null {
  try {
    const st = fs.statSync(file)
    return st.isFile() ? st : null
  } catch {
    return null
  }
}

/** The label → id map of index_metadata.pickle; null when absent or unreadable. */
function readLabels(dir: string): Map<number, string> | null {
  const file = path.join(dir, 'index_metadata.pickle')
  const st = regularFile(file)
  if (!st || st.size > 1024 * 1024 * 1024) return null
  let fields: Record<string, unknown> | null
  try {
    fields = fieldsOf(readPickle(readRegularFile(file, 'Chroma index metadata')))
  } catch {
    return null
  }
  const l2i = fields?.label_to_id
  if (!l2i || typeof l2i !== 'object' || Array.isArray(l2i)) return null
  const out = new Map<number, string>()
  for (const [k, v] of Object.entries(l2i as Record<string, unknown>)) if (typeof v === 'string' && /^\d+$/.test(k)) out.set(Number(k), v)
  return out
}

export function readHnswSegment(dir: string): HnswVectors {
  const none = (problem: string): HnswVectors => ({ vectors: new Map(), dim: 0, deleted: 0, problem })
  const headerSt = regularFile(path.join(dir, 'header.bin'))
  const dataSt = regularFile(path.join(dir, 'data_level0.bin'))
  if (!headerSt || !dataSt) return none('no HNSW files (header.bin, data_level0.bin)')
  const labels = readLabels(dir)
  if (!labels) return none('index_metadata.pickle is missing or unreadable')
  const h = readRegularFile(path.join(dir, 'header.bin'), 'Chroma index header')
  if (h.length < HEADER_BYTES) return none('header.bin is truncated')
  const size = (o: number) => Number(h.readBigUInt64LE(o))
  const version = h.readInt32LE(0)
  const count = size(4 + 8 * 2)
  const perElement = size(4 + 8 * 3)
  const labelOffset = size(4 + 8 * 4)
  const offsetData = size(4 + 8 * 5)
  const dim = (labelOffset - offsetData) / 4
  if (version !== 1 || !Number.isInteger(dim) || dim <= 0 || labelOffset + 8 > perElement || count * perElement > dataSt.size)
    return none(`header.bin does not describe data_level0.bin (version ${version}, ${count} elements of ${perElement} bytes)`)
  const out = new Map<string, Float32Array>()
  let deleted = 0
  const fd = openRegularFile(path.join(dir, 'data_level0.bin'), 'Chroma index file')
  try {
    // one element at a time: bounded memory whatever the index size
    const block = Buffer.alloc(perElement)
    for (let i = 0; i < count; i++) {
      if (fs.readSync(fd, block, 0, perElement, i * perElement) !== perElement) break
      if (block[2] & DELETE_MARK) {
        deleted++
        continue
      }
      const id = labels.get(Number(block.readBigUInt64LE(labelOffset)))
      if (id === undefined) continue
      const v = new Float32Array(dim)
      for (let d = 0; d < dim; d++) v[d] = block.readFloatLE(offsetData + d * 4)
      out.set(id, v)
    }
  } finally {
    fs.closeSync(fd)
  }
  return { vectors: out, dim, deleted, problem: null }
}
