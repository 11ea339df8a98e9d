/**
 * main's answers for the Recall screen's tests over a fake preload bridge (fakeBridge.ts): a dense recall of the
 * test's candidates at `now`, scored by the shared scorer as main does, and the few other channels the screen asks.
 */
import type { CandidateRaw, RecallConfig, RecallTrace } from '../../../shared/types'
import { PRESETS } from '../../../shared/presets'
import { rerank } from '../../../shared/scoring'
import { renderResults } from '../../../shared/render'
import { unitInfo } from './unitInfo'
import type { AppState } from '../app/context'

const DAY = 86_400_000

/** The answer function for `installFakeBridge`: the recall of `cands` (every one in scope, their ages up to 40 days) at `now`. */
export function recallAnswers(cands: readonly CandidateRaw[], now: number): (channel: string, input: { config?: RecallConfig }) => unknown {
  const n = cands.length
  const units = Object.fromEntries(cands.map((c) => [c.id, unitInfo(c.id, now - c.ageCreatedMs)]))
  const traceFor = (config: RecallConfig): RecallTrace => {
    const r = rerank(cands, config, 'dense')
    const ctx = renderResults(r.results, { candidates: cands, units, mode: 'dense' }, config)
    const arm = (ran: boolean) => ({ ran, fetched: ran ? n : 0, exhausted: ran, reason: ran ? null : 'off in this test' })
    return {
      query: 'q',
      cue: null,
      now,
      preset: 'fieldguide',
      config,
      embedder: { name: 'hashing', model: null, available: true },
      degraded: false,
      degradedReason: null,
      results: r.results,
      dropped: r.dropped,
      context: ctx.text,
      contextTokens: ctx.tokens,
      candidates: [...cands],
      units,
      refreshed: [],
      counts: { inScope: n, dense: n, lexical: 0, pool: n },
      timings: { totalMs: 3, embedMs: 0, denseMs: 1, lexicalMs: 0, scoreMs: 1 },
      mode: 'dense',
      unit: 'memory',
      arms: { dense: arm(true), lexical: arm(false), recency: arm(false), order: arm(false) },
      injectedTokens: r.injectedTokens,
    }
  }
  return (channel, input) => {
    switch (channel) {
      case 'recall.presets':
        return PRESETS
      case 'embed.status':
        return { state: 'ok', spec: 'hashing', model: 'hashing-256', storedVectors: n }
      case 'memories.facets':
        return { agents: [], users: [], kinds: ['semantic'], tiers: [], roles: [], timeRange: { min: now - 40 * DAY, max: now } }
      case 'recall.run':
        return traceFor(input.config!)
      case 'recall.ages':
        return { now, from: 'last_used', binMs: DAY, bins: [{ startMs: 0, endMs: 40 * DAY, count: n }], total: n, neverUsed: n }
      case 'recall.scopeCount':
        return { total: n }
      case 'configs.list':
        return { configs: [], unreadable: [] }
      default:
        throw new Error(`not in this test: ${channel}`)
    }
  }
}

/** How long to wait for the screen's first query to show: its first render loads the screen's modules (16–20 s at load 25). */
export const FIRST_QUERY_WAIT_MS = 45_000

/** The app's state for a Recall screen opened on the query "q" with the fieldguide preset at `now`. */
export function recallApp(now: number): AppState {
  return {
    db: null,
    setDb: () => undefined,
    nav: { route: 'recall', params: { query: 'q', preset: 'fieldguide', now: String(now) } },
    navigate: () => undefined,
    setParams: () => undefined,
    dbVersion: 0,
  }
}
