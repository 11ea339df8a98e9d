/**
 * Reading LanceDB tables (CrewAI's unified memory, Cognee, any app's table) without writing.
 *
 * @lancedb/lancedb is asynchronous while Store.open is synchronous (every CLI command and the
 * app call it synchronously), so the tables are read by a short child process of the same
 * runtime (`ELECTRON_RUN_AS_NODE` inside Electron) that prints the rows as JSON and appends the
 * vectors to a temporary side file (removed right after). Only read calls (connect /
 * tableNames / openTable / schema / query) — nothing writes to the dataset.
 */
import { spawnSync } from 'node:child_process'
import fs from 'node:fs'
import { createRequire } from 'node:module'
import os from 'node:os'
import path from 'node:path'
import { RecallscopeError } from '../../../../shared/result'

/** One table as read: its fields, its vector column, rows of plain values, and each row's vector length. */
export interface LanceTable {
  name: string
  fields: { name: string; type: string }[]
  /** the fixed-size float list column read as the vector ('vector' first), or null */
  vectorColumn: string | null
  rows: Record<string, unknown>[]
  /** float32 count of each row's vector in the side file (0: none) */
  dims: number[]
}

/**
 * Run in the child. For each table: the schema, every non-vector column as JSON-safe values
 * (bigint → number, structs and lists → plain JSON, binary → null), and the vector column's
 * floats in row order into the side file (a 10k × 3072 table is 120 MB of floats: no JSON for
 * those). A fixed-size list chunk without nulls is one contiguous run, written in one call.
 */
const READER_JS = `
const fs = require('node:fs');
const [lancePath, dir, wantedJson, vecFile] = process.argv.slice(1);
const wanted = JSON.parse(wantedJson);
const lancedb = require(lancePath);
const plain = (v) => {
  if (v === undefined || v === null) return null;
  if (typeof v === 'bigint') return Number(v);
  if (v instanceof Uint8Array) return null;
  if (ArrayBuffer.isView(v)) return Array.from(v, (x) => (typeof x === 'bigint' ? Number(x) : x));
  if (typeof v === 'object') {
    if (typeof v.toJSON === 'function') return plain(v.toJSON());
    if (typeof v.toArray === 'function') return plain(v.toArray());
    if (Array.isArray(v)) return v.map(plain);
    const o = {};
    for (const k of Object.keys(v)) o[k] = plain(v[k]);
    return o;
  }
  return v;
};
const isVector = (f) => { const t = String(f.type); return /^FixedSizeList\\[\\d+\\]<Float(16|32|64)>$/.test(t); };
(async () => {
  const db = await lancedb.connect(dir);
  const names = await db.tableNames();
  const pick = wanted === '*' ? names : wanted.filter((n) => names.includes(n));
  const fd = fs.openSync(vecFile, 'w');
  const out = [];
  for (const name of pick) {
    const t = await db.openTable(name);
    const tbl = await t.query().toArrow();
    const fields = tbl.schema.fields.map((f) => ({ name: f.name, type: String(f.type) }));
    const vf = tbl.schema.fields.filter(isVector);
    const vcol = (vf.find((f) => f.name === 'vector') || vf[0] || null);
    const n = tbl.numRows;
    const cols = tbl.schema.fields.filter((f) => f !== vcol).map((f) => [f.name, tbl.getChild(f.name)]);
    const rows = new Array(n);
    for (let i = 0; i < n; i++) { const r = {}; for (const [c, col] of cols) r[c] = plain(col.get(i)); rows[i] = r; }
    const dims = new Array(n).fill(0);
    const vec = vcol ? tbl.getChild(vcol.name) : null;
    let row = 0;
    for (const d of vec ? vec.data : []) {
      const ls = d.type && d.type.listSize;
      const child = d.children && d.children[0];
      if (ls && child && child.values instanceof Float32Array && !d.nullCount) {
        const f32 = child.values.subarray(d.offset * ls + child.offset, (d.offset + d.length) * ls + child.offset);
        fs.writeSync(fd, new Uint8Array(f32.buffer, f32.byteOffset, f32.byteLength));
        for (let i = 0; i < d.length; i++) dims[row + i] = ls;
      } else {
        for (let i = 0; i < d.length; i++) {
          const v = vec.get(row + i);
          if (!v) continue;
          const f = v.toArray ? v.toArray() : v;
          const f32 = f instanceof Float32Array ? f : Float32Array.from(f);
          fs.writeSync(fd, new Uint8Array(f32.buffer, f32.byteOffset, f32.byteLength));
          dims[row + i] = f32.length;
        }
      }
      row += d.length;
    }
    out.push({ name, fields, vectorColumn: vcol ? vcol.name : null, rows, dims });
  }
  fs.closeSync(fd);
  process.stdout.write(JSON.stringify({ tables: out, all: names }));
})().catch((e) => { process.stderr.write(String((e && e.stack) || e)); process.exit(2); });
`

/** Tables found in a LanceDB folder without opening them: its `<name>.lance` subfolders. */
export function lanceTableNames(dir: string): string[] {
  try {
    return fs
      .readdirSync(dir, { withFileTypes: true })
      .filter((d) => d.isDirectory() && d.name.endsWith('.lance'))
      .map((d) => d.name.slice(0, -'.lance'.length))
      .sort()
  } catch {
    return []
  }
}

/** Entries walked before a dataset is taken as too large to vet (the child is not started then). @default 200000 */
const MAX_DATASET_ENTRIES = 200_000

/**
 * Refuse a dataset with anything but folders and regular files under its `<table>.lance` folders:
 * the reader child blocks on a FIFO data file until its 5-minute timeout (a planted pipe wedges
 * the open), and a device or socket is no dataset either. Links are followed (stat) and judged by
 * what they point at. Throws BAD_INPUT naming the path, before any child is started.
 */
function assertRegularDataset(dir: string): void {
  const stack = lanceTableNames(dir).map((n) => path.join(dir, `${n}.lance`))
  let seen = 0
  while (stack.length) {
    const d = stack.pop() as string
    let names: string[]
    try {
      names = fs.readdirSync(d)
    } catch {
      continue // unreadable: LanceDB reports it
    }
    for (const name of names) {
      if (++seen > MAX_DATASET_ENTRIES)
        throw new RecallscopeError('BAD_INPUT', `The LanceDB folder ${dir} has more than ${MAX_DATASET_ENTRIES} files: refused`, { path: dir })
      const p = path.join(d, name)
      let st: fs.Stats
      try {
        st = fs.statSync(p)
      } catch {
        continue // a dangling link: LanceDB reports it if it matters
      }
      if (st.isDirectory()) {
        if (!fs.lstatSync(p).isSymbolicLink()) stack.push(p) // a linked folder is not walked (no cycles)
      } else if (!st.isFile()) {
        const kind = st.isFIFO() ? 'a FIFO (named pipe)' : st.isSocket() ? 'a socket' : 'a device'
        throw new RecallscopeError('BAD_INPUT', `The LanceDB data file ${p} is ${kind}, not a regular file: refused`, { path: p, kind })
      }
    }
  }
}

/**
 * Read tables of a LanceDB folder (synchronously, via a child process): `tables` by name, or
 * '*' for all. Returns them with their vectors' side file content and every table name found.
 */
export function readLanceTables(dir: string, tables: string[] | '*'): { tables: LanceTable[]; vectors: Buffer; all: string[] } {
  let lancePath: string
  try {
    lancePath = createRequire(__filename).resolve('@lancedb/lancedb')
  } catch (e) {
    throw new RecallscopeError('INTERNAL', `@lancedb/lancedb is not installed, so LanceDB folders cannot be read: ${(e as Error).message}`)
  }
  assertRegularDataset(dir)
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'recallscope-lance-'))
  try {
    const vecFile = path.join(tmp, 'vectors.f32')
    const r = spawnSync(process.execPath, ['-e', READER_JS, lancePath, dir, JSON.stringify(tables), vecFile], {
      env: { ...process.env, ELECTRON_RUN_AS_NODE: '1' },
      encoding: 'utf8',
      maxBuffer: 2 ** 31 - 1,
      timeout: 300_000,
    })
    if (r.error) throw new RecallscopeError('INTERNAL', `Cannot read ${dir} with LanceDB: ${r.error.message}`)
    if (r.status !== 0)
      throw new RecallscopeError('NOT_SQLITE', `Cannot read ${dir} with LanceDB: ${(r.stderr || '').trim().split('\n')[0] || `exit ${r.status}`}`)
    const out = JSON.parse(r.stdout) as { tables?: LanceTable[]; all?: string[] }
    return { tables: out.tables ?? [], vectors: fs.existsSync(vecFile) ? fs.readFileSync(vecFile) : Buffer.alloc(0), all: out.all ?? [] }
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true })
  }
}

/** f32 vector at a byte offset of the side file; null for an all-zero placeholder (no direction, no cosine). */
export function sliceVector(buf: Buffer, offset: number, dim: number): Float32Array | null {
  if (dim === 0) return null
  const v = new Float32Array(buf.buffer.slice(buf.byteOffset + offset, buf.byteOffset + offset + dim * 4))
  return v.some((x) => x !== 0) ? v : null
}
