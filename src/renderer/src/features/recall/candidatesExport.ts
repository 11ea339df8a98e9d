/**
 * The export of a recall's candidates (CSV / JSONL): every candidate the gates
 * saw, injected and dropped, in score order, with its features, weighted
 * contributions, tokens and the gate that dropped it.
 */
import type { UnitInfo } from '../../../../shared/types'
import type { ExportSpec } from '../../lib/exportTable'
import type { Row } from './ResultsList'

const FEATURES = ['similarity', 'lexical', 'recency', 'salience'] as const

/** Columns for the candidates of one trace (`units` gives each id's text and fields). */
export function candidatesExport(units: Record<string, UnitInfo>): ExportSpec<Row> {
  return {
    columns: [
      { header: 'score_rank', value: (r) => r.scoreRank },
      { header: 'rank', value: (r) => r.rank },
      { header: 'id', value: (r) => r.id },
      { header: 'status', value: (r) => (r.gate === null ? 'injected' : `dropped: ${r.gate}`) },
      { header: 'score', value: (r) => r.score },
      ...FEATURES.map((f) => ({ header: f, value: (r: Row) => r.features[f] })),
      ...FEATURES.map((f) => ({ header: `${f}_contribution`, value: (r: Row) => r.contributions[f] })),
      { header: 'tokens', value: (r) => r.tokens },
      { header: 'kind', value: (r) => units[r.id]?.kind ?? null },
      { header: 'session_id', value: (r) => units[r.id]?.sessionId ?? null },
      { header: 'content', value: (r) => units[r.id]?.content ?? null },
    ],
    toJson: (r) => ({ ...r, content: units[r.id]?.content ?? null }),
  }
}
