/**
 * Evidence attribution of a logged event: for each memory it returned, how much
 * of the agent's decision text that memory supports — by shared content words
 * (src/shared/evidence.ts) and by embedding overlap: the cosine between the
 * decision text embedded with the embedder that makes the store's vectors of the
 * event's model and the memory's stored vector. No vector, no embedder, a server
 * that is down: the embedding column is absent and says why; the token column
 * never needs a server.
 */
import { cosine, tokenEvidence } from '../../shared/evidence'
import type { EvidenceAttribution, EvidenceRow } from '../../shared/trace'
import type { EventDecision, RecallTrace } from '../../shared/types'
import { createEmbedder } from '../embed/index'
import type { MemorySource } from '../store/source'
import { embedderSpecForModel, eventDecision, unitsOf, type EventRun, type PrepareOptions } from './event'

/** The text a decision is attributed by: the message, or the tool call's name and arguments. */
export function decisionText(d: EventDecision): string {
  if (d.text) return d.text
  return d.toolCall ? `${d.toolCall.name} ${d.toolCall.arguments}` : ''
}

/** Evidence attribution of an event's decision over its returned memories; null when it records no decision. */
export async function eventEvidence(store: MemorySource, run: EventRun, trace: RecallTrace, opts: PrepareOptions = {}): Promise<EvidenceAttribution | null> {
  const decision = eventDecision(run.event, run.extras)
  if (!decision) return null
  const text = decisionText(decision)
  const ids = run.event.results.map((r) => r.id)
  const owner = run.config.unit === 'session' ? 'session' : 'memory'
  const units = unitsOf(store, ids, owner, trace)
  const tok = tokenEvidence(
    text,
    ids.map((id) => ({ id, text: units.get(id)?.content ?? null })),
  )
  const model = run.config.model ?? null
  const embedder: EvidenceAttribution['embedder'] = { spec: null, model, available: false, reason: null }
  let dv: Float32Array | null = null
  if (!model) embedder.reason = 'the event’s config names no embedding model: there are no stored vectors to compare with'
  else {
    try {
      const spec = embedderSpecForModel(store, model, opts.embedder, owner)
      embedder.spec = spec
      const e = createEmbedder(spec, opts.embedderOptions ?? {})
      if (!e.enabled || e.model !== model) embedder.reason = `${spec} does not make ${model} vectors`
      else {
        dv = (await e.embed([text]))[0] ?? null
        embedder.available = dv !== null
      }
    } catch (err) {
      embedder.reason = `the decision could not be embedded: ${(err as Error).message}`
    }
  }
  const idx = dv && model ? store.vectors(model, owner) : null
  const rows: EvidenceRow[] = tok.rows.map((r, i) => {
    let embedding: number | null = null
    let embeddingWhy: string | null = embedder.reason
    if (idx && dv) {
      const row = idx.rowOf.get(r.id)
      if (!units.get(r.id)) embeddingWhy = 'no longer in the DB'
      else if (row === undefined) embeddingWhy = `no stored ${model} vector`
      else if (idx.dim !== dv.length) embeddingWhy = `the stored vectors are ${idx.dim}-d, the embedder gives ${dv.length}-d`
      else {
        embedding = cosine(dv, idx.rowVector(row))
        embeddingWhy = embedding === null ? 'a zero vector' : null
      }
    }
    return {
      id: r.id,
      rank: i + 1,
      text: units.get(r.id)?.content ?? null,
      token: r.support,
      shared: r.shared.map(({ term, weight }) => ({ term, weight })),
      embedding,
      embeddingWhy,
    }
  })
  return { decision, text, union: tok.union, decisionTerms: tok.decisionTerms, embedder, rows }
}
