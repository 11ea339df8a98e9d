/**
 * Handlers for recall: run one query, list presets, compare presets side by
 * side, and the age histogram behind the decay curve. `now` defaults to the
 * clock here, at the boundary; the engine itself never reads a clock.
 */
import type { RecallCompare } from '../../../shared/contract'
import type { RecallScope } from '../../../shared/types'
import { jaccard, rankTable, rbo } from '../../../shared/overlap'
import { ALL_PRESETS } from '../../../shared/presets'
import { RecallscopeError } from '../../../shared/result'
import type { App } from '../app'
import type { Handlers } from '../register'
import { createEmbedder } from '../../embed/index'
import { armTexts } from '../../../shared/cue'
import { prepareVector, runRecallSync } from '../../recall/engine'
import { scopeFilter } from '../../recall/scope'
import { buildConfig, checkRequirements, defaultEmbedderSpec, recallFromRequest } from '../../recall/request'

type RecallChannels = 'recall.run' | 'recall.presets' | 'recall.compare' | 'recall.ages' | 'recall.scopeCount' | 'recall.refresh'

/** The scope the Recall screen's counts and decay chart show: working and long-term memories unless it names tiers. */
const shownScope = (scope: Partial<RecallScope>, now: number) => scopeFilter({ tiers: ['working', 'long_term'], ...scope }, now)
/** The exact scope count's ceiling (a count the SQL stops at: far past any store here) */
const SCOPE_COUNT_CAP = 2 ** 40

export function recallHandlers(app: App): Pick<Handlers, RecallChannels> {
  const embedderOptions = () => {
    const s = app.settings()
    return { ollamaHost: s.ollamaHost, openaiBaseUrl: s.openaiBaseUrl }
  }
  return {
    'recall.run': async (i) => {
      const store = await app.readyStore()
      return recallFromRequest(store, {
        preset: i.preset,
        config: i.config,
        query: i.query,
        cue: i.cue ?? null,
        now: i.now ?? Date.now(),
        embedder: i.embedder ?? app.settings().embedder ?? null,
        embedderOptions: embedderOptions(),
        queryVector: i.queryVector ?? null,
      })
    },
    'recall.presets': () => ALL_PRESETS,
    'recall.compare': async (i): Promise<RecallCompare> => {
      const store = await app.readyStore()
      const now = i.now ?? Date.now()
      const built = i.runs.map((r, n) => {
        const b = buildConfig({ preset: r.preset, config: r.config })
        if (r.preset) checkRequirements(r.preset, b.requires, b.config)
        return { label: r.label ?? r.preset ?? `run ${n + 1}`, preset: r.preset ?? b.preset, config: b.config }
      })
      if (i.query.trim() === '' && !i.cue) throw new RecallscopeError('BAD_INPUT', 'A query (or a cue) is required')
      // One embedding per distinct dense text (and model), shared by every run: same vector, fair comparison.
      const spec = i.embedder ?? app.settings().embedder ?? null
      const vectors = new Map<string, Awaited<ReturnType<typeof prepareVector>>>()
      const runs: RecallCompare['runs'] = []
      for (const b of built) {
        const texts = armTexts(i.query, i.cue ?? null, b.config.cueUse)
        const owner = b.config.unit === 'session' ? 'session' : 'memory'
        const embedder = i.queryVector ? null : createEmbedder(spec ?? defaultEmbedderSpec(store, owner), embedderOptions())
        const key = `${owner}\u0000${texts.dense}`
        let prepared = vectors.get(key)
        if (!prepared) vectors.set(key, (prepared = await prepareVector(store, texts.dense, { embedder, queryVector: i.queryVector ?? null })))
        runs.push({
          label: b.label,
          preset: b.preset,
          trace: runRecallSync(store, { text: i.query, cue: i.cue ?? null }, b.config, now, { preset: b.preset, prepared }),
        })
      }
      const lists = runs.map((r) => r.trace.results.map((x) => x.id))
      const overlap: RecallCompare['overlap'] = []
      for (let a = 0; a < lists.length; a++)
        for (let b = a + 1; b < lists.length; b++) overlap.push({ a, b, jaccard: jaccard(lists[a], lists[b]), rbo: rbo(lists[a], lists[b], i.rboP) })
      return { now, runs, overlap, ranks: rankTable(lists) }
    },
    'recall.refresh': (i) => app.requireStore().applyRefresh(i.ids, i.now),
    'recall.ages': (i) => {
      const now = i.now ?? Date.now()
      return app.requireStore().ageHistogram(shownScope(i.scope, now), now, i.from, i.bins)
    },
    'recall.scopeCount': (i) => ({ total: app.requireStore().countScope(shownScope(i.scope, i.now ?? Date.now()), SCOPE_COUNT_CAP).count }),
  }
}
