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
 * runtime (`ELECTRON_RUN_AS_NODE` inside Electron) that prints the rows as JSON.
 */
import { spawnSync } from 'node:child_process'
import fs from 'node:fs'
import { createRequire } from 'node:module'
import path from 'node:path'
import { RecallscopeError } from '../../../../shared/result'
import { MemoryDbBuilder, toEpochMs, type Materialized, type Materializer } from '../materialize'

/** One row of CrewAI's `memories` table as the reader returns it (vector as base64 little-endian f32). */
export interface CrewaiLanceRow {
  id: string
  content: string
  scope: string | null
  categories_str: string | null
  metadata_str: string | null
  importance: number | null
  created_at: string | null
  last_accessed: string | null
  source: string | null
  private: boolean | null
  vector: string | null
}

const TABLE = 'memories'

/**
 * Run in the child: connect, open the table, read every row, print JSON. Only read calls
 * (connect / tableNames / openTable / query) — nothing here writes to the dataset.
 */
const READER_JS = `
const [lancePath, dir, table] = process.argv.slice(1);
const lancedb = require(lancePath);
(async () => {
  const db = await lancedb.connect(dir);
  const names = await db.tableNames();
  if (!names.includes(table)) { process.stdout.write(JSON.stringify({ missing: true, tables: names })); return; }
  const t = await db.openTable(table);
  const rows = await t.query().toArray();
  const str = (v) => (v === null || v === undefined ? null : String(v));
  const out = rows.map((r) => {
    let vector = null;
    if (r.vector) {
      const f = Float32Array.from(r.vector.toArray ? r.vector.toArray() : r.vector);
      vector = Buffer.from(f.buffer, f.byteOffset, f.byteLength).toString('base64');
    }
    return { id: str(r.id), content: str(r.content), scope: str(r.scope), categories_str: str(r.categories_str),
      metadata_str: str(r.metadata_str), importance: r.importance === null || r.importance === undefined ? null : Number(r.importance),
      created_at: str(r.created_at), last_accessed: str(r.last_accessed), source: str(r.source),
      private: r.private === null || r.private === undefined ? null : Boolean(r.private), vector };
  });
  process.stdout.write(JSON.stringify({ rows: out }));
})().catch((e) => { process.stderr.write(String((e && e.stack) || e)); process.exit(2); });
`

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

/** Read every row of the `memories` table of a LanceDB folder (synchronously, via a child process). */
export function readCrewaiLance(p: string): CrewaiLanceRow[] {
  const dir = findLanceDir(p)
  if (!dir) throw new RecallscopeError('NOT_FOUND', `${p} is not a LanceDB folder with a '${TABLE}' table (looked for ${TABLE}.lance/)`)
  let lancePath: string
  try {
    lancePath = createRequire(__filename).resolve('@lancedb/lancedb')
  } catch (e) {
    throw new RecallscopeError('INTERNAL', `@lancedb/lancedb is not installed, so CrewAI's LanceDB memory cannot be read: ${(e as Error).message}`)
  }
  const r = spawnSync(process.execPath, ['-e', READER_JS, lancePath, dir, TABLE], {
    env: { ...process.env, ELECTRON_RUN_AS_NODE: '1' },
    encoding: 'utf8',
    maxBuffer: 2 ** 31 - 1,
    timeout: 120_000,
  })
  if (r.error) throw new RecallscopeError('INTERNAL', `Cannot read ${dir} with LanceDB: ${r.error.message}`)
  if (r.status !== 0) throw new RecallscopeError('NOT_SQLITE', `Cannot read ${dir} with LanceDB: ${(r.stderr || '').trim().split('\n')[0] || `exit ${r.status}`}`)
  const out = JSON.parse(r.stdout) as { rows?: CrewaiLanceRow[]; missing?: boolean; tables?: string[] }
  if (out.missing) throw new RecallscopeError('UNKNOWN_LAYOUT', `${dir} is a LanceDB folder without a '${TABLE}' table (tables: ${(out.tables ?? []).join(', ') || 'none'})`)
  return out.rows ?? []
}

function parseJson(s: string | null, fallback: unknown): unknown {
  if (!s) return fallback
  try {
    return JSON.parse(s)
  } catch {
    return s // kept verbatim: shown, never lost
  }
}

/** f32 vector from base64; null for CrewAI's zero placeholder (no embedding) or an empty one. */
function decodeVector(b64: string | null): Float32Array | null {
  if (!b64) return null
  const buf = Buffer.from(b64, 'base64')
  if (buf.length === 0 || buf.length % 4 !== 0) return null
  const v = new Float32Array(buf.buffer.slice(buf.byteOffset, buf.byteOffset + buf.length))
  return v.some((x) => x !== 0) ? v : null
}

export const crewaiLanceMaterializer: Materializer = {
  name: 'crewai-lancedb',
  sniff: (p) => findLanceDir(p) !== null,
  materialize(p, opts): Materialized {
    const rows = readCrewaiLance(p)
    const b = new MemoryDbBuilder(opts?.nativeBinding)
    let vectors = 0
    b.batch(() => {
      for (const r of rows) {
        if (!r.id || r.content === null) continue
        const created = toEpochMs(r.created_at) ?? 0
        b.memory({
          id: r.id,
          agent_id: r.scope ?? null,
          user_id: r.source || null,
          kind: 'semantic',
          tier: 'long_term',
          content: r.content,
          salience: r.importance,
          created_at: created,
          last_used_at: toEpochMs(r.last_accessed),
          source: 'crewai',
          metadata: JSON.stringify({
            scope: r.scope,
            categories: parseJson(r.categories_str, []),
            private: r.private === true,
            metadata: parseJson(r.metadata_str, {}),
          }),
        })
        const v = decodeVector(r.vector)
        if (v) {
          b.embedding('memory', r.id, `crewai:${v.length}`, v)
          vectors++
        }
      }
    })
    const fingerprint = b.fingerprint()
    return {
      db: b.done(),
      fingerprint,
      layout: 'crewai-lancedb',
      detectedBecause: `LanceDB folder with table '${TABLE}' (${rows.length} rows, ${vectors} with a vector): CrewAI unified memory`,
    }
  },
}
