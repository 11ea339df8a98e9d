/**
 * One gather's reads of a store: what a recall asks the store for again and again when many of
 * them run together (an eval's 1,000 cases over a handful of scopes), answered once.
 *
 * The store memoises scope listings and decoded rows per data version too, but every such call
 * checks the version first (a PRAGMA), builds a key and copies a list; for an eval that was most of
 * a case's setup (docs/internals/performance.md, the eval bench). A PassReads is made for one gather
 * (one recall, or every case of an eval), reads the store once per distinct question, and is
 * dropped after it: it assumes the store does not change meanwhile, as a batch of recalls over
 * one snapshot of the store should see it. It also keeps the time its scope and row reads took,
 * for the eval's `timings`.
 */
import type { Memory } from '../../shared/types'
import type { LexicalPass, LexicalRequest, MemoryFilter, MemorySource, ScopeRows, SourceCapabilities } from '../store/source'
import type { VectorIndex } from '../store/vectors/vectorIndex'

/** The store reads of a gather, answered once per distinct question. */
export class PassReads {
  private caps: SourceCapabilities | null = null
  private readonly models = new Map<string, string[]>()
  private readonly indexes = new Map<string, VectorIndex>()
  private readonly scopes = new Map<string, ScopeRows>()
  private readonly counts = new Map<string, { count: number; capped: boolean }>()
  private readonly lexicalTerms = new Map<string, boolean>()
  private readonly rows = new Map<string, Memory | undefined>()
  /** ms spent listing and counting scopes in the store */
  scopeMs = 0
  /** ms spent reading and decoding rows */
  rowsMs = 0

  /**
   * @param vectors where vector indexes come from (eval shares its own across gathers).
   * @default store.vectors, asked once per (model, owner) in this gather
   */
  constructor(
    readonly store: MemorySource,
    private readonly vectorsOf?: (model: string, owner: 'memory' | 'session') => VectorIndex,
  ) {}

  capabilities(): SourceCapabilities {
    return (this.caps ??= this.store.capabilities())
  }

  storedModels(owner: 'memory' | 'session'): string[] {
    let m = this.models.get(owner)
    if (!m) this.models.set(owner, (m = this.store.storedModels(owner)))
    return m
  }

  vectors(model: string, owner: 'memory' | 'session'): VectorIndex {
    const k = `${owner}\u0000${model}`
    let v = this.indexes.get(k)
    if (!v) this.indexes.set(k, (v = this.vectorsOf ? this.vectorsOf(model, owner) : this.store.vectors(model, owner)))
    return v
  }

  /** The store's scopeRows, once per (filter, cap): the same object every time, so per-listing caches (dense.ts, the lexical pass) hold. */
  scopeRows(f: MemoryFilter, cap: number): ScopeRows {
    return this.scopeRead(this.scopes, f, cap, () => this.store.scopeRows(f, cap))
  }

  countScope(f: MemoryFilter, cap?: number): { count: number; capped: boolean } {
    return this.scopeRead(this.counts, f, cap, () => this.store.countScope(f, cap))
  }

  /** A scope read once per (filter, cap), its time counted in scopeMs. */
  private scopeRead<T>(memo: Map<string, T>, f: MemoryFilter, cap: number | undefined, read: () => T): T {
    const key = `${cap}|${JSON.stringify(f)}`
    let v = memo.get(key)
    if (v === undefined) {
      const t0 = performance.now()
      memo.set(key, (v = read()))
      this.scopeMs += performance.now() - t0
    }
    return v
  }

  hasLexicalTerms(text: string): boolean {
    let b = this.lexicalTerms.get(text)
    if (b === undefined) this.lexicalTerms.set(text, (b = this.store.hasLexicalTerms(text)))
    return b
  }

  /**
   * The rows of `ids` that exist, by id: read from the store only for ids not read before in this
   * gather. The map answers `get` for every asked id (it may hold others: read it only by id).
   */
  memories(ids: Iterable<string>): ReadonlyMap<string, Memory | undefined> {
    let missing: string[] | null = null
    for (const id of ids) if (!this.rows.has(id)) (missing ??= []).push(id)
    if (missing) {
      const t0 = performance.now()
      const got = this.store.getMemories(missing)
      // A row gone from the store is remembered as gone (undefined), like a row read.
      for (const id of missing) this.rows.set(id, got.get(id))
      this.rowsMs += performance.now() - t0
    }
    return this.rows
  }

  /** Not memoised (each answer depends on the query); the store answers this gather's passes from one snapshot when it can. */
  lexicalPass(req: LexicalRequest): LexicalPass {
    return this.store.lexicalPass({ ...req, snapshot: this })
  }
  // Not memoised (each answer depends on the query): the store's own.
  idsWhere(f: MemoryFilter, cap?: number): string[] {
    return this.store.idsWhere(f, cap)
  }
  memoriesWhere(f: MemoryFilter, opts?: { limit?: number; order?: 'created_desc' | 'created_asc' | 'turn' }): Memory[] {
    return this.store.memoriesWhere(f, opts)
  }
  keywordSearch(f: MemoryFilter, keywords: string[], limit: number): string[] {
    return this.store.keywordSearch(f, keywords, limit)
  }
}
