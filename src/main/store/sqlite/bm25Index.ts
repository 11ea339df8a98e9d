/**
 * The JS BM25 index's data and its growth (bm25.ts builds it and ranks with it): the pooled
 * postings with their per-row factors made per term on first use, the query side (FTS5's own
 * tokenizer, IDF with SQLite's ln()), and `appendRows`, which takes rows an agent added since the
 * build without reading the whole index again.
 */
import type Database from 'better-sqlite3'

/**
 * Indexes above this many rows keep FTS5 (the JS postings would cost memory and build time).
 * Top-k over the JS postings (bm25Top.ts) is what lets a word in every row stay fast at 1M.
 */
export const MAX_ROWS = 2_000_000

/**
 * Full builds and appends (appendRows) so far in this process, long lists warmed, and queries run again as a
 * background build ended (onBm25Built) (tests and benches read them).
 */
export const bm25Counts = { builds: 0, appends: 0, warmed: 0, rerunAtBuild: 0 }

const K1 = 1.2
const B = 0.75

export interface Postings {
  rids: Int32Array
  /**
   * Per posting, FTS5's per-row factor tf·(k1 + 1) / (tf + k1·(1 − b + b·D/avgdl)) (D: the row's
   * token count), divided once here: the same division of the same two doubles as in bm25(), so
   * idf × this is bm25()'s product bit for bit.
   */
  tf: Float64Array
}

/** A term's postings, looked up by term (a Map of them, or the pooled table a build makes). */
interface PostingsLookup {
  get(term: string): Postings | undefined
}

/**
 * Every term's postings in two pooled arrays (rows, term frequencies), each term a run of them: a
 * million singleton terms (an id in every memory's text) cost 8 bytes a posting and one Map entry,
 * not two typed arrays each (~200 bytes). Rows appended since the build (`appendRows`) add their
 * postings after a term's run (their rowids are above every indexed one, so each list stays in rowid
 * order). A term's `{ rids, tf }` is made when a query first asks and kept for this version of the
 * index (bm25Top.ts caches its bounds per list object): the per-row factors depend on the average row
 * length, which an append changes, so they are computed here, with FTS5's operations, for the
 * current numbers — a full build of the same rows gives the same doubles.
 */
class PooledPostings implements PostingsLookup {
  private readonly views = new Map<string, Postings>()
  constructor(
    private readonly pool: Pool,
    private readonly avgdl: number,
  ) {}
  get(term: string): Postings | undefined {
    let v = this.views.get(term)
    if (v) return v
    const { rids: poolRids, freq: poolFreq, at, extra, docLen } = this.pool
    const a = at.get(term)
    const x = extra.get(term)
    if (a === undefined && !x) return undefined
    const n0 = a === undefined ? 0 : a % RUN
    const off = a === undefined ? 0 : (a - n0) / RUN
    let rids = poolRids.subarray(off, off + n0)
    let freq = poolFreq.subarray(off, off + n0)
    if (x) {
      rids = Int32Array.from([...rids, ...x.rids])
      freq = Int32Array.from([...freq, ...x.freq])
    }
    const tf = new Float64Array(rids.length)
    const avgdl = this.avgdl
    // The per-row parts of FTS5's expression, with its very operations and order.
    for (let i = 0; i < tf.length; i++) {
      const f = freq[i]
      const D = docLen(rids[i])
      const num = f * (K1 + 1.0)
      const den = f + K1 * (1 - B + (B * D) / avgdl)
      tf[i] = num / den
    }
    v = { rids, tf }
    this.views.set(term, v)
    return v
  }
}
/** A run's length is below this (MAX_ROWS < 2²²); offsets up to 2³¹ keep offset × RUN + length exact. */
export const RUN = 2 ** 22

/** The postings of an index: the build's pooled runs, the appended rows' postings, each row's token count. */
export interface Pool {
  rids: Int32Array
  freq: Int32Array
  /** term → offset × RUN + length of its run in `rids` and `freq` */
  at: Map<string, number>
  /** postings of rows appended since the build, per term, in rowid order (after the term's run) */
  extra: Map<string, { rids: number[]; freq: number[] }>
  /** postings in `extra` */
  extraCount: number
  /** a row's token count (all columns) */
  docLen: (rid: number) => number
  /** appended rows' token counts */
  extraLen: Map<number, number>
}

export interface Bm25Index {
  nRow: number
  avgdl: number
  postings: PostingsLookup
  /**
   * The index of the table as it is now when only rows were added since this one was built (their
   * postings appended, the numbers that depend on the row count and average length recomputed), or
   * null when something else changed or it cannot tell (a full build is needed). This index stays
   * usable until the returned one is.
   */
  appendRows?(): Bm25Index | null
  /** word → its single token, or null when the tokenizer makes zero or several tokens of it */
  tokenOf(words: string[]): (string | null)[]
  /** FTS5's IDF of a phrase found in `nHit` rows, with SQLite's own ln() (the same libm log bm25() calls) */
  idfOf(nHit: number): number
  close(): void
}

/** SQLite's big-endian varint (as FTS5 writes its records). */
export function readVarints(buf: Uint8Array): number[] {
  const out: number[] = []
  let i = 0
  while (i < buf.length) {
    let v = 0
    for (let k = 0; k < 9 && i < buf.length; k++) {
      const b = buf[i++]
      if (k === 8) {
        v = v * 256 + b
        break
      }
      v = v * 128 + (b & 0x7f)
      if (!(b & 0x80)) break
    }
    out.push(v)
  }
  return out
}

/** The FTS table's `tokenize=` option from its CREATE statement (FTS5's default otherwise). */
function tokenizeOption(db: Database.Database, name: string): string {
  const sql = (db.prepare(`SELECT sql FROM sqlite_master WHERE name = ?`).pluck().get(name) as string | undefined) ?? ''
  const m = /tokenize\s*=\s*(?:'((?:[^']|'')*)'|"((?:[^"]|"")*)")/i.exec(sql)
  return m ? (m[1] ?? m[2]).replace(/''/g, "'").replace(/""/g, '"') : 'unicode61'
}

export const quoteIdent = (s: string) => `"${s.replace(/"/g, '""')}"`

/** What an index's numbers come from: its postings, the averages record's totals, the highest rowid indexed. */
interface IndexState {
  pool: Pool
  /** the averages record: the row count, then each column's token total */
  totals: number[]
  maxRid: number
}

/** FTS5's averages record (`%_data` id 1): the row count, then each column's token total; null when absent. */
export function averagesOf(db: Database.Database, table: string): number[] | null {
  const avg = db
    .prepare(`SELECT block FROM ${quoteIdent(`${table}_data`)} WHERE id = 1`)
    .pluck()
    .get() as Uint8Array | undefined
  return avg ? readVarints(avg) : null
}

/** Appended rows at most per appendRows (more: a full build, in the background for a big index). */
const APPEND_MAX = 20_000

/**
 * The Bm25Index over `st` on the private connection `db`. `conn.open` is shared by every index made
 * from the same build: the connection closes once, with the last index in use (appendRows hands it on).
 */
export function indexOf(db: Database.Database, table: string, tokenOf: Bm25Index['tokenOf'], st: IndexState, conn: { open: boolean }): Bm25Index {
  const nRow = st.totals[0]
  let nTok = 0
  for (let i = 1; i < st.totals.length; i++) nTok += st.totals[i]
  const avgdl = nTok / nRow
  let handedOn = false
  return {
    nRow,
    avgdl,
    postings: new PooledPostings(st.pool, avgdl),
    tokenOf,
    idfOf: idfFor(db, nRow),
    appendRows: () => {
      if (!conn.open || handedOn) return null
      let next: IndexState | null
      try {
        next = appendedState(db, table, st)
      } catch {
        next = null // an unreadable change: a full build decides
      }
      if (!next) return null
      bm25Counts.appends++
      handedOn = true
      return indexOf(db, table, tokenOf, next, conn)
    },
    close: () => {
      if (handedOn || !conn.open) return
      conn.open = false
      db.close()
    },
  }
}

/**
 * The state after rows were only added to the table (their rowids above every indexed one): the
 * averages record must count exactly the indexed rows plus the new ones, column by column, and the
 * new rows' tokens — FTS5's own tokenizer over their text, in a temp table with the same columns and
 * `tokenize=` — must be what `%_docsize` says FTS5 indexed for each. Anything else (a deletion, an
 * update, a contentless table, too many rows) is null: a full build.
 */
function appendedState(db: Database.Database, table: string, st: IndexState): IndexState | null {
  db.exec('BEGIN')
  try {
    const totals = averagesOf(db, table)
    if (!totals) return null
    const cols = totals.length - 1
    if (totals[0] > MAX_ROWS || cols !== st.totals.length - 1) return null
    const added = db
      .prepare(`SELECT id, sz FROM ${quoteIdent(`${table}_docsize`)} WHERE id > ? ORDER BY id LIMIT ${APPEND_MAX + 1}`)
      .raw(true)
      .all(st.maxRid) as [number, Uint8Array][]
    if (added.length > APPEND_MAX || totals[0] !== st.totals[0] + added.length) return null
    const sizes = new Map<number, number[]>()
    const sum = st.totals.slice(1)
    for (const [id, sz] of added) {
      const per = readVarints(sz)
      if (per.length !== cols) return null
      per.forEach((x, c) => (sum[c] += x))
      sizes.set(Number(id), per)
    }
    if (sum.some((x, c) => x !== totals[c + 1])) return null
    if (added.length === 0) return { ...st, totals }
    // The new rows' (term, row) occurrences through FTS5's tokenizer: their text, column by column.
    const names = (db.prepare(`SELECT name FROM pragma_table_info(?)`).pluck().all(table) as string[]).map(quoteIdent)
    if (names.length !== cols) return null
    const tok = tokenizeOption(db, table).replace(/'/g, "''")
    db.exec(
      `CREATE VIRTUAL TABLE IF NOT EXISTS temp.rs_app USING fts5(${names.map((_, i) => `c${i}`).join(', ')}, tokenize='${tok}');
       CREATE VIRTUAL TABLE IF NOT EXISTS temp.rs_appv USING fts5vocab(temp, rs_app, instance);
       DELETE FROM temp.rs_app;`,
    )
    const ins = db.prepare(`INSERT INTO temp.rs_app (rowid, ${names.map((_, i) => `c${i}`).join(', ')}) VALUES (${names.map(() => '?').join(', ')}, ?)`)
    let texts = 0
    // (read first: better-sqlite3 runs one statement at a time on a connection)
    for (const row of db
      .prepare(`SELECT rowid, ${names.join(', ')} FROM ${quoteIdent(table)} WHERE rowid > ? ORDER BY rowid LIMIT ${APPEND_MAX + 1}`)
      .raw(true)
      .all(st.maxRid) as unknown[][]) {
      if (!sizes.has(Number(row[0]))) return null
      ins.run(...row)
      texts++
    }
    if (texts !== added.length) return null
    const { extra, extraLen } = st.pool
    const seen = new Map<number, number[]>()
    const postings: [string, number][] = []
    for (const [term, doc, col] of db.prepare(`SELECT term, doc, col FROM temp.rs_appv`).raw(true).iterate() as Iterable<[string, number, string]>) {
      const d = Number(doc)
      const per = seen.get(d) ?? new Array<number>(cols).fill(0)
      per[names.findIndex((_, i) => `c${i}` === col)]++
      seen.set(d, per)
      postings.push([term, d])
    }
    db.exec('DELETE FROM temp.rs_app')
    // Every new row tokenized to what FTS5 indexed for it, column by column: the text is the indexed one.
    for (const [id, per] of sizes) {
      const got = seen.get(id) ?? new Array<number>(cols).fill(0)
      if (got.some((x, c) => x !== per[c])) return null
    }
    // (term, row) in term order, then row order: a row's occurrences adjacent, rows ascending per term.
    let added2 = 0
    for (let i = 0; i < postings.length; i++) {
      const [term, d] = postings[i]
      if (i > 0 && postings[i - 1][0] === term && postings[i - 1][1] === d) {
        const x = extra.get(term)!
        x.freq[x.freq.length - 1]++
        continue
      }
      let x = extra.get(term)
      if (!x) extra.set(term, (x = { rids: [], freq: [] }))
      x.rids.push(d)
      x.freq.push(1)
      added2++
    }
    for (const [id, per] of sizes)
      extraLen.set(
        id,
        per.reduce((a, b) => a + b, 0),
      )
    const pool: Pool = { ...st.pool, extraCount: st.pool.extraCount + added2 }
    return { pool, totals, maxRid: Number(added[added.length - 1][0]) }
  } finally {
    if (db.inTransaction) db.exec('COMMIT')
  }
}

/** The index's query words through FTS5's own tokenizer, on its private connection (a temp FTS5 table with the same `tokenize=`). */
export function tokenizerOf(db: Database.Database, table: string): Bm25Index['tokenOf'] {
  const tok = tokenizeOption(db, table).replace(/'/g, "''")
  db.exec(`CREATE VIRTUAL TABLE temp.rs_tok USING fts5(x, tokenize='${tok}'); CREATE VIRTUAL TABLE temp.rs_tokv USING fts5vocab(temp, rs_tok, instance);`)
  const ins = db.prepare(`INSERT INTO temp.rs_tok (rowid, x) VALUES (?, ?)`)
  const read = db.prepare(`SELECT doc, term FROM temp.rs_tokv`).raw(true)
  const clear = db.prepare(`DELETE FROM temp.rs_tok`)
  const cache = new Map<string, string | null>()
  return (words: string[]): (string | null)[] => {
    let cached = true
    for (let i = 0; i < words.length && cached; i++) cached = cache.has(words[i])
    const todo = cached ? [] : [...new Set(words.filter((w) => !cache.has(w)))]
    if (todo.length) {
      clear.run()
      todo.forEach((w, i) => ins.run(i + 1, w))
      const got: string[][] = todo.map(() => [])
      for (const [doc, term] of read.all() as [number, string][]) got[Number(doc) - 1].push(term)
      todo.forEach((w, i) => cache.set(w, got[i].length === 1 ? got[i][0] : null))
    }
    return words.map((w) => cache.get(w) ?? null)
  }
}

/**
 * FTS5's IDF for an index of `nRow` rows. JS's Math.log and the C library's log can differ in the last
 * bit, and that bit decides exact ties in bm25 order: the logarithm comes from SQLite's ln(), which
 * calls the same log().
 */
function idfFor(db: Database.Database, nRow: number): Bm25Index['idfOf'] {
  const ln = db.prepare(`SELECT ln(?)`).pluck()
  const idfs = new Map<number, number>()
  return (nHit: number): number => {
    let idf = idfs.get(nHit)
    if (idf === undefined) {
      idf = (ln.get((nRow - nHit + 0.5) / (nHit + 0.5)) as number | null) ?? 0
      if (idf <= 0.0) idf = 1e-6
      idfs.set(nHit, idf)
    }
    return idf
  }
}
