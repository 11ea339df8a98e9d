/**
 * What the Postgres source's query modules (facts, browse, candidates, vectors, dense, events)
 * share, as SqliteCtx does for the SQLite source: the bridge, the detected layout, the parsed
 * URL and the caches. `PgSource` implements it; the modules take it as their first argument,
 * so the class stays a thin list of methods. It is a MemorySource too: a module asks another
 * role's public method through it (e.g. dense asks `countScope`).
 */
import type { EmbeddingModelFacts, MalformedCounts, Memory } from '../../../shared/types'
import type { MemorySource } from '../source'
import type { VectorIndex } from '../vectors/vectorIndex'
import type { Workspace } from '../workspace/workspace'
import type { PgBridge } from './bridge'
import type { PgLayout } from './layouts'
import type { ParsedPgUrl } from './url'

export interface AnnIndex {
  name: string
  method: 'hnsw' | 'ivfflat'
}

export interface PgCtx extends MemorySource {
  readonly url: ParsedPgUrl
  readonly sql: PgLayout
  readonly bridge: PgBridge
  readonly workspace: Workspace
  readonly workspacePath: string
  readonly countCap: number
  /** pgvector's version, null when the extension is not installed */
  readonly pgvector: string | null
  readonly serverVersion: string
  readonly annIndex: AnnIndex | null
  /** ef_search / probes for the ANN methods (from the URL) */
  readonly annEf: number
  readonly annProbes: number
  /** the method the dense arm uses: exact unless the URL chose an ANN index (checked at open) */
  readonly denseMethod: 'exact' | 'hnsw' | 'ivfflat'
  /** pgvector's operators work on the stored column */
  readonly pushdownReady: boolean
  readonly malformed: MalformedCounts
  /** decoded memories by id (emptied by reloadVectors) */
  readonly memo: Map<string, Memory>
  /** whether a text has lexical terms, per text */
  readonly lexTerms: Map<string, boolean>
  /** loaded vector indexes per (owner type, model), with the workspace write count they saw */
  readonly indexes: Map<string, { idx: VectorIndex; wsWrites: number }>
  /** per (owner type, model): the workspace's backfilled vectors of ids the server has no vector of that model for */
  readonly backfills: Map<string, { idx: VectorIndex; wsWrites: number }>
  /** keyset cursors: the last row of a page, keyed by the query without its offset */
  readonly cursors: Map<string, { offset: number; key: [number, string] }>
  /** walkMemories ordinals → the id at that ordinal (keyset continuation) */
  readonly walkKeys: Map<string, Map<number, string>>
  serverModelsCache: EmbeddingModelFacts[] | null
  modelsCache: { facts: EmbeddingModelFacts[]; wsWrites: number } | null
  /** the stored length of zero-padded vectors (layout.vectorPadded), read once */
  padLength: number | null
  /** whether the planner uses the ANN index for the dense query (EXPLAIN once, ANN mode only) */
  annIndexUsed: boolean | null
  /** One statement through the bridge (rows as objects). */
  q<R = Record<string, unknown>>(sql: string, params?: unknown[]): R[]
}

/** The text-search configuration of the lexical arm and the browser's search. */
const TS_CONFIG = `'english'`
export const docExpr = (a: string) => `to_tsvector(${TS_CONFIG}::regconfig, coalesce(${a}.content, '') || ' ' || coalesce(${a}.summary, ''))`
export const tsq = (param: string) => `websearch_to_tsquery(${TS_CONFIG}::regconfig, ${param})`

/** A vector literal pgvector parses ('[0.1,0.2,…]'). */
export function vectorLiteral(v: ArrayLike<number>): string {
  let s = '['
  for (let i = 0; i < v.length; i++) s += (i ? ',' : '') + String(v[i])
  return s + ']'
}

/** A page size within 1..1000. */
export function clampLimit(n: number | undefined, dflt = 100): number {
  return Math.max(1, Math.min(1000, Math.floor(n ?? dflt)))
}

/** The values pgvector refuses in a vector (a real[] row holding one is skipped and counted as malformed). */
export const NON_FINITE = `ARRAY['NaN', 'Infinity', '-Infinity']::real[]`
