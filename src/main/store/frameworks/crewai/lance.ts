/**
 * CrewAI unified memory (LanceDB) → in-memory canonical DB, read-only.
 *
 * Layout read from crewAIInc/crewAI @ 00835e156222e25819f3429ef38c422377b671df,
 * lib/crewai/src/crewai/memory/storage/lancedb_storage.py (`_create_table`, `_record_to_row`):
 * a LanceDB folder (default `<storage>/memory/`) holding table `memories`
 * (`memories.lance/`) with columns id, content, scope, categories_str (JSON list),
 * metadata_str (JSON object), importance (float64 0..1), created_at / last_accessed
 * (Python `isoformat()` of naive UTC datetimes), source, private (bool) and vector
 * (fixed-size list<float32>; `[0.0] * dim` when the record had no embedding).
 *
 * Canonical mapping:
 *   id → id · content → content · importance → salience · created_at → created_at ·
 *   last_accessed → last_used_at · source (provenance: a user or session id) → user_id ·
 *   scope (hierarchical path such as /crew/research) → agent_id, so the scope facet is the
 *   agent facet · kind 'semantic', tier 'long_term' (the unified memory has no tiers) ·
 *   metadata = { scope, categories, private, metadata } · vector → embeddings under the
 *   label `crewai:<dim>` (LanceDB does not record the embedder).
 * Not shown: the placeholder zero vectors CrewAI writes for records without an embedding
 * (no direction, so no cosine; those memories have no vector), and LanceDB's version history.
 *
 * @lancedb/lancedb is asynchronous while Store.open is synchronous (every CLI command and
 * the app call it synchronously), so the table is read by a short child process of the same
 * runtime (`ELECTRON_RUN_AS_NODE` inside Electron) that prints the rows as JSON and writes
 * the vectors to a temporary side file (removed right after).

 * The table is read by lance/read.ts (a short child process; only read calls).
 */
import fs from 'node:fs'
import path from 'node:path'
import { RecallscopeError } from '../../../../shared/result'
import { readLanceTables, sliceVector } from '../lance/read'
import { MemoryDbBuilder, toEpochMs, type Materialized, type Materializer } from '../materialize'

const TABLE = 'memories'

/** The LanceDB folder for a path: the database folder itself, or a `<table>.lance` folder inside it. */
function findLanceDir(p: string): string | null {
  try {
    if (!fs.statSync(p).isDirectory()) return null
    if (path.basename(p) === `${TABLE}.lance`) return path.dirname(p)
    return fs.statSync(path.join(p, `${TABLE}.lance`)).isDirectory() ? p : null
  } catch {
    return null
  }
}

/** Read every row of the `memories` table of a LanceDB folder, with its vectors. */
function readCrewaiLance(p: string): { rows: Record<string, unknown>[]; dims: number[]; vectors: Buffer } {
  const dir = findLanceDir(p)
  if (!dir) throw new RecallscopeError('NOT_FOUND', `${p} is not a LanceDB folder with a '${TABLE}' table (looked for ${TABLE}.lance/)`)
  const r = readLanceTables(dir, [TABLE])
  const t = r.tables[0]
  if (!t) throw new RecallscopeError('UNKNOWN_LAYOUT', `${dir} is a LanceDB folder without a '${TABLE}' table (tables: ${r.all.join(', ') || 'none'})`)
  return { rows: t.rows, dims: t.dims, vectors: r.vectors }
}

const text = (v: unknown): string | null => (typeof v === 'string' ? v : null)

function parseJson(s: string | null, fallback: unknown): unknown {
  if (!s) return fallback
  try {
    return JSON.parse(s)
  } catch {
    return s // kept verbatim: shown, never lost
  }
}

export const crewaiLanceMaterializer: Materializer = {
  name: 'crewai-lancedb',
  lookedFor: 'CrewAI: a LanceDB folder with memories.lance/',
  sniff: (p) => findLanceDir(p) !== null,
  materialize(p, opts): Materialized {
    const { rows, dims, vectors: buf } = readCrewaiLance(p)
    const b = new MemoryDbBuilder(opts?.nativeBinding)
    let vectors = 0
    let offset = 0
    b.batch(() => {
      rows.forEach((r, i) => {
        const at = offset
        offset += dims[i] * 4
        const id = text(r.id)
        const content = text(r.content)
        if (!id || content === null) return
        const scope = text(r.scope)
        b.memory({
          id,
          agent_id: scope,
          user_id: text(r.source) || null,
          kind: 'semantic',
          tier: 'long_term',
          content,
          salience: typeof r.importance === 'number' ? r.importance : null,
          created_at: toEpochMs(r.created_at) ?? 0,
          last_used_at: toEpochMs(r.last_accessed),
          source: 'crewai',
          metadata: JSON.stringify({
            scope,
            categories: parseJson(text(r.categories_str), []),
            private: r.private === true,
            metadata: parseJson(text(r.metadata_str), {}),
          }),
        })
        const v = sliceVector(buf, at, dims[i])
        if (v) {
          b.embedding('memory', id, `crewai:${v.length}`, v)
          vectors++
        }
      })
    })
    const ftsKey = b.fingerprint()
    return {
      db: b.done(),
      ftsKey,
      layout: 'crewai-lancedb',
      detectedBecause: `LanceDB folder with table '${TABLE}' (${rows.length} rows, ${vectors} with a vector): CrewAI unified memory`,
    }
  },
}
