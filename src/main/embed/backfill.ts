/**
 * Embedding backfill: memories without a usable vector of a model get one from
 * an embedder, written to the WORKSPACE (`ws_embeddings`): the agent DB is never
 * touched. The store's VectorIndex merges those vectors with the agent's (a
 * valid agent vector wins), so dense recall uses them at once.
 *
 * "Without a usable vector" means: not in the model's index, i.e. no agent row,
 * or an agent row that was rejected (NULL/garbage JSON, NaN, wrong length), and
 * no workspace row yet. Memories with empty content are skipped (nothing to embed).
 *
 * Runs as a job: async, yields to the event loop after every batch, checks the
 * abort signal before and during every embedding call. Each batch is written in
 * one transaction, so a cancel or a failure mid-way leaves only whole, valid
 * vectors behind: they are kept (a rerun skips them) and the report says how many.
 */
import type { BackfillReport } from '../../shared/contract'
import { RecallscopeError } from '../../shared/result'
import type { MemoryFilter, MemorySource } from '../store/source'
import type { Embedder } from './types'

export type { BackfillReport } from '../../shared/contract'

export interface BackfillOptions {
  /** Only memories matching this filter. @default every memory */
  filter?: MemoryFilter
  /** Texts per embedding call (and per workspace transaction). @default 32 */
  batchSize?: number
  /** Provenance written with each vector (the embedder spec). @default `${embedder.name}:${embedder.model}` */
  spec?: string
  /** Wall clock for `created_at` (explicit so tests are exact). @default Date.now() */
  now?: number
  signal?: AbortSignal
  /** (memories visited, memories in scope, message) after every batch */
  onProgress?: (done: number, total: number, message?: string) => void
}

/** Rows read from the agent DB per page (ids and content only). */
const PAGE = 2000

const tick = () => new Promise<void>((r) => setImmediate(r))

function cancelled(report: BackfillReport): RecallscopeError {
  return new RecallscopeError(
    'CANCELLED',
    `Backfill cancelled after ${report.embedded.toLocaleString('en-US')} new vectors; they are kept in the workspace (a rerun skips them)`,
    { report },
  )
}

/** Embed every in-scope memory that has no usable vector of `embedder.model`. */
export async function backfillEmbeddings(store: MemorySource, embedder: Embedder, opts: BackfillOptions = {}): Promise<BackfillReport> {
  const t0 = performance.now()
  if (!embedder.enabled || !embedder.model)
    throw new RecallscopeError('BAD_INPUT', `Embedder "${embedder.name}" makes no vectors: pick one with a model (e.g. ollama:nomic-embed-text)`)
  const model = embedder.model
  const batchSize = Math.max(1, Math.min(1024, Math.floor(opts.batchSize ?? 32)))
  const spec = opts.spec ?? (embedder.name === model ? model : `${embedder.name}:${model}`)
  const now = opts.now ?? Date.now()
  const signal = opts.signal
  const filter = opts.filter ?? {}
  const idx = store.vectors(model, 'memory')
  const report: BackfillReport = {
    model,
    embedder: spec,
    dim: idx.dim || null,
    inScope: 0,
    alreadyEmbedded: 0,
    embedded: 0,
    skippedEmpty: 0,
    rejected: 0,
    batches: 0,
    tookMs: 0,
  }
  report.inScope = store.walkCount(filter)
  const progress = (done: number) => opts.onProgress?.(done, report.inScope, `${report.embedded.toLocaleString('en-US')} embedded`)
  let dim = idx.dim || 0
  let visited = 0
  let after = Number.MIN_SAFE_INTEGER
  progress(0)
  for (;;) {
    if (signal?.aborted) throw cancelled(report)
    if (store.isClosed) throw new RecallscopeError('NO_DB', 'The database was closed during the backfill')
    const rows = store.walkMemories(filter, after, PAGE)
    if (rows.length === 0) break
    after = rows[rows.length - 1].key
    const todo: { id: string; text: string }[] = []
    for (const { id, content } of rows) {
      if (idx.rowOf.has(id)) report.alreadyEmbedded++
      else if (content.trim() === '') report.skippedEmpty++
      else todo.push({ id, text: content })
    }
    const pageStart = visited
    for (let i = 0; i < todo.length; i += batchSize) {
      if (signal?.aborted) throw cancelled(report)
      const batch = todo.slice(i, i + batchSize)
      let vectors: Float32Array[]
      try {
        vectors = await embedder.embed(
          batch.map((b) => b.text),
          { signal },
        )
      } catch (e) {
        if (signal?.aborted || (e instanceof RecallscopeError && e.code === 'CANCELLED')) throw cancelled(report)
        if (e instanceof RecallscopeError)
          throw new RecallscopeError(e.code, `${e.message} (after ${report.embedded.toLocaleString('en-US')} new vectors, which are kept)`, {
            ...(e.details as object),
            report,
          })
        throw e
      }
      if (vectors.length !== batch.length)
        throw new RecallscopeError('EMBEDDER_UNAVAILABLE', `The embedder returned ${vectors.length} vectors for ${batch.length} texts`, { report })
      const keep: { id: string; vector: Float32Array }[] = []
      for (let j = 0; j < batch.length; j++) {
        const v = vectors[j]
        let finite = v.length > 0
        for (let k = 0; finite && k < v.length; k++) finite = Number.isFinite(v[k])
        if (!finite) {
          report.rejected++
          continue
        }
        if (dim === 0) dim = v.length
        else if (v.length !== dim)
          throw new RecallscopeError(
            'BAD_INPUT',
            `${spec} gives ${v.length}-d vectors but the ${model} vectors ${idx.dim ? 'already stored' : 'embedded so far'} have ${dim}: a different model under the same name? Nothing of this batch was written.`,
            { report },
          )
        keep.push({ id: batch[j].id, vector: v })
      }
      // Written only if not cancelled meanwhile: a cancel wins over a late answer.
      if (signal?.aborted) throw cancelled(report)
      if (store.isClosed) throw new RecallscopeError('NO_DB', 'The database was closed during the backfill')
      if (keep.length) store.workspace.putVectors('memory', model, keep, spec, now)
      report.embedded += keep.length
      report.batches++
      report.dim = dim || null
      visited = Math.min(pageStart + (rows.length - todo.length) + i + batch.length, report.inScope)
      progress(visited)
      await tick()
    }
    visited = Math.min(pageStart + rows.length, report.inScope)
    progress(visited)
    await tick()
  }
  report.tookMs = performance.now() - t0
  return report
}
