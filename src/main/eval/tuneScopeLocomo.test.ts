/**
 * Tuning from a preset whose scope hides the judged memories (LoCoMo dev set):
 * `portal-episodic` ranks sessions (unit=session) and `mem0` reads only
 * kinds=[semantic], while every LoCoMo judgment is a turn (an episodic memory).
 * The tune must say which filter excludes them, search the widened scope, and
 * end within 1 point of BM25 on the held-out conversations, where the BM25
 * number is this test's own `runEval` of a lexical-only config it builds itself
 * (not the tuner's baseline row). Skips when ../shared is absent.
 */
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { EvalCaseRow, TuneReport } from '../../shared/eval'
import { getPreset } from '../../shared/presets'
import type { RecallConfig } from '../../shared/types'
import { LOCOMO_DEV, requireSharedData } from '../../../test/helpers/sharedData'
import { tmpDir } from '../../../test/helpers/tmp'
import { createEmbedder } from '../embed/index'
import { importLocomo } from '../store/importers/locomo'
import { openSource } from '../store/registry'
import type { SqliteSource } from '../store/sqlite/source'
import { runEval } from './evaluate'
import { GatherCache } from './replay'
import { runTune } from './tuneJob'

const input = requireSharedData(LOCOMO_DEV, 'LoCoMo scope-diagnosis tune test (src/main/eval/tuneScopeLocomo.test.ts)')

describe.skipIf(!input)('LoCoMo: tuning from a preset whose scope hides the judged memories', () => {
  let t: ReturnType<typeof tmpDir>
  let store: SqliteSource
  let cases: EvalCaseRow[]
  /** One per open store, as the app's job worker keeps it for every tune: the second tune reuses the preset baselines the first gathered. */
  let cache: GatherCache

  beforeAll(async () => {
    t = tmpDir()
    const db = path.join(t.dir, 'locomo.db')
    await importLocomo({ input: input!, output: db, now: 0 })
    store = openSource({ path: db })
    cases = store.workspace.loadCases()
    cache = new GatherCache(store)
  }, 300_000)
  afterAll(() => {
    store?.close()
    t?.cleanup()
  })

  /** Independent of the tuner: judged (case, memory) pairs, and those whose memory passes `keep`. */
  const judged = (keep: (m: { kind: string | null }) => boolean) => {
    const pairs = cases.filter((c) => !c.expectEmpty).flatMap((c) => c.relevant.filter((r) => r.grade > 0).map((r) => r.id))
    const rows = store.getMemories([...new Set(pairs)])
    const present = pairs.filter((id) => rows.has(id))
    return { relevant: present.length, kept: present.filter((id) => keep(rows.get(id)!)).length }
  }

  /**
   * recall@10 of `config` on `caseIds` by a plain eval (the engine per case), once per distinct (config, cases):
   * both tunes split the same cases alike, so BM25 on their held-out conversations is one eval.
   */
  const evals = new Map<string, Promise<number>>()
  const recallAt10 = (config: RecallConfig, caseIds: string[]) => {
    const key = JSON.stringify([config, caseIds])
    let v = evals.get(key)
    if (!v) evals.set(key, (v = runEval(store, { config, k: 10, embedder: 'hashing', now: 0, createdAt: 0, caseIds }).then((r) => r.metrics['recall@10']!)))
    return v
  }

  /** BM25 as a user would write it: lexical arm only, the default tiers, top 10, no floor. Built here, not taken from the report. */
  const bm25: RecallConfig = {
    ...getPreset('fieldguide').config,
    mode: 'lexical',
    unit: 'memory',
    scope: { tiers: ['working', 'long_term'] },
    weights: { similarity: 0, lexical: 1, recency: 0, salience: 0 },
    candidatePool: 30,
    floor: null,
    minSimilarity: null,
    topK: 10,
    tokenBudget: null,
  }

  for (const [name, filter, keep] of [
    ['portal-episodic', 'unit', () => false],
    ['mem0', 'kinds', (m: { kind: string | null }) => m.kind === 'semantic'],
  ] as const) {
    it(`from ${name}: names ${filter} as the filter, widens it, and lands within 1 point of BM25 on the held-out conversations`, async () => {
      const start = getPreset(name).config
      const report: TuneReport = await runTune(store, cases, start, {
        embedder: createEmbedder('hashing'),
        now: 0,
        metric: 'recall@10',
        budget: 300,
        seed: 1,
        cache,
      })
      const expected = judged(keep)
      expect(expected.relevant).toBeGreaterThan(100)
      expect(report.scope).toBeTruthy()
      const scope = report.scope!
      expect(scope.relevant).toBe(expected.relevant)
      expect(scope.reachable).toBe(expected.kept)
      expect(scope.minority).toBe(true)
      expect(scope.applied).toBe(true)
      expect(scope.excludedBy[0]).toMatchObject({ filter, excludes: expected.relevant - expected.kept })
      expect(scope.message).toContain(filter === 'unit' ? 'unit=session' : 'kinds=[semantic]')
      if (filter === 'kinds') expect(scope.widenPatch).toEqual({ scope: { kinds: ['semantic', 'episodic'] } })
      else expect(scope.widenPatch).toEqual({ unit: 'memory' })
      expect(scope.message).toMatch(/Widen to/)
      // The search ran on the widened scope, the start baseline kept the preset's.
      expect(report.base.config.unit).toBe('memory')
      if (filter === 'kinds') expect(report.base.config.scope.kinds).toEqual(['semantic', 'episodic'])
      expect(report.baselines.find((b) => b.name === 'start')!.config).toEqual(start)

      const testConvs = new Set(report.split.testGroups)
      const heldOut = cases.filter((c) => testConvs.has(c.scope.agentId!)).map((c) => c.id)
      expect(heldOut.length).toBeGreaterThan(20)
      const bm25HeldOut = await recallAt10(bm25, heldOut)
      const shipped = await recallAt10(report.recommended.config, heldOut)
      const startHeldOut = await recallAt10(start, heldOut)
      console.log(
        `tune from ${name}: ${scope.message}\n  held-out recall@10: recommended (${report.recommended.name}) ${shipped.toFixed(4)} · BM25 (independent) ${bm25HeldOut.toFixed(4)} · start preset as is ${startHeldOut.toFixed(4)} · tuned ${report.best.test?.toFixed(4)}`,
      )
      expect(bm25HeldOut).toBeGreaterThan(0.3)
      expect(shipped).toBeGreaterThanOrEqual(bm25HeldOut - 0.01)
    }, 600_000)
  }
})
