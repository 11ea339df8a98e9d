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
 */
import { spawnSync } from 'node:child_process'
import fs from 'node:fs'
import { createRequire } from 'node:module'
import os from 'node:os'
import path from 'node:path'
import { RecallscopeError } from '../../../../shared/result'
import { MemoryDbBuilder, toEpochMs, type Materialized, type Materializer } from '../materialize'

/** One row of CrewAI's `memories` table as the reader returns it; the vector is read from the side file. */
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
  /** float32 count of this row's vector in the side file (0: none) */
  dim: number
}

const TABLE = 'memories'
const SCALARS = ['id', 'content', 'scope', 'categories_str', 'metadata_str', 'importance', 'created_at', 'last_accessed', 'source', 'private']

/**
 * Run in the child: connect, open the table, read it as Arrow (columnar), print the scalar
 * columns as JSON and append every vector's float32 bytes, in row order, to a side file (a
 * 10k × 3072 table is 120 MB of floats: no JSON for those). Only read calls (connect /
 * tableNames / openTable / query) — nothing here writes to the dataset.
 */
const READER_JS = `
const fs = require('node:fs');
const [lancePath, dir, table, vecFile, scalarsJson] = process.argv.slice(1);
const scalars = JSON.parse(scalarsJson);
const lancedb = require(lancePath);
(async () => {
  const db = await lancedb.connect(dir);
  const names = await db.tableNames();
  if (!names.includes(table)) { process.stdout.write(JSON.stringify({ missing: true, tables: names })); return; }
  const t = await db.openTable(table);
  const tbl = await t.query().toArrow();
  const n = tbl.numRows;
  const cols = {};
  for (const c of scalars) cols[c] = tbl.getChild(c);
  const vec = tbl.getChild('vector');
  const fd = fs.openSync(vecFile, 'w');
  const rows = new Array(n);
  for (let i = 0; i < n; i++) {
    const r = {};
    for (const c of scalars) {
      const v = cols[c] ? cols[c].get(i) : null;
      r[c] = v === undefined ? null : typeof v === 'bigint' ? Number(v) : v;
    }
    r.dim = 0;
    rows[i] = r;
  }
  // Vectors: a fixed-size list<float32> chunk without nulls is one contiguous run of floats,
  // written in one call; anything else row by row.
  let row = 0;
  for (const d of vec ? vec.data : []) {
    const ls = d.type && d.type.listSize;
    const child = d.children && d.children[0];
    if (ls && child && child.values instanceof Float32Array && !d.nullCount) {
      const f32 = child.values.subarray(d.offset * ls + child.offset, (d.offset + d.length) * ls + child.offset);
      fs.writeSync(fd, new Uint8Array(f32.buffer, f32.byteOffset, f32.byteLength));
      for (let i = 0; i < d.length; i++) rows[row + i].dim = ls;
    } else {
      for (let i = 0; i < d.length; i++) {
        const v = vec.get(row + i);
        if (!v) continue;
        const f = v.toArray ? v.toArray() : v;
        const f32 = f instanceof Float32Array ? f : Float32Array.from(f);
        fs.writeSync(fd, new Uint8Array(f32.buffer, f32.byteOffset, f32.byteLength));
        rows[row + i].dim = f32.length;
      }
    }
    row += d.length;
  }
  fs.closeSync(fd);
  process.stdout.write(JSON.stringify({ rows }));
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

/** Read every row of the `memories` table of a LanceDB folder (synchronously, via a child process), with its vectors. */
function readCrewaiLance(p: string): { rows: CrewaiLanceRow[]; vectors: Buffer } {
  const dir = findLanceDir(p)
  if (!dir) throw new RecallscopeError('NOT_FOUND', `${p} is not a LanceDB folder with a '${TABLE}' table (looked for ${TABLE}.lance/)`)
  let lancePath: string
  try {
    lancePath = createRequire(__filename).resolve('@lancedb/lancedb')
  } catch (e) {
    throw new RecallscopeError('INTERNAL', `@lancedb/lancedb is not installed, so CrewAI's LanceDB memory cannot be read: ${(e as Error).message}`)
  }
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'recallscope-lance-'))
  try {
    const vecFile = path.join(tmp, 'vectors.f32')
    const r = spawnSync(process.execPath, ['-e', READER_JS, lancePath, dir, TABLE, vecFile, JSON.stringify(SCALARS)], {
      env: { ...process.env, ELECTRON_RUN_AS_NODE: '1' },
      encoding: 'utf8',
      maxBuffer: 2 ** 31 - 1,
      timeout: 300_000,
    })
    if (r.error) throw new RecallscopeError('INTERNAL', `Cannot read ${dir} with LanceDB: ${r.error.message}`)
    if (r.status !== 0)
      throw new RecallscopeError('NOT_SQLITE', `Cannot read ${dir} with LanceDB: ${(r.stderr || '').trim().split('\n')[0] || `exit ${r.status}`}`)
    const out = JSON.parse(r.stdout) as { rows?: CrewaiLanceRow[]; missing?: boolean; tables?: string[] }
    if (out.missing)
      throw new RecallscopeError('UNKNOWN_LAYOUT', `${dir} is a LanceDB folder without a '${TABLE}' table (tables: ${(out.tables ?? []).join(', ') || 'none'})`)
    return { rows: out.rows ?? [], vectors: fs.existsSync(vecFile) ? fs.readFileSync(vecFile) : Buffer.alloc(0) }
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true })
  }
}

function parseJson(s: string | null, fallback: unknown): unknown {
  if (!s) return fallback
  try {
    return JSON.parse(s)
  } catch {
    return s // kept verbatim: shown, never lost
  }
}

/** f32 vector at a byte offset of the side file; null for CrewAI's zero placeholder (no embedding). */
function sliceVector(buf: Buffer, offset: number, dim: number): Float32Array | null {
  if (dim === 0) return null
  const v = new Float32Array(buf.buffer.slice(buf.byteOffset + offset, buf.byteOffset + offset + dim * 4))
  return v.some((x) => x !== 0) ? v : null
}

export const crewaiLanceMaterializer: Materializer = {
  name: 'crewai-lancedb',
  lookedFor: 'CrewAI: a LanceDB folder with memories.lance/',
  sniff: (p) => findLanceDir(p) !== null,
  materialize(p, opts): Materialized {
    const { rows, vectors: buf } = readCrewaiLance(p)
    const b = new MemoryDbBuilder(opts?.nativeBinding)
    let vectors = 0
    let offset = 0
    b.batch(() => {
      for (const r of rows) {
        const at = offset
        offset += r.dim * 4
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
        const v = sliceVector(buf, at, r.dim)
        if (v) {
          b.embedding('memory', r.id, `crewai:${v.length}`, v)
          vectors++
        }
      }
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
