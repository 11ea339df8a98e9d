/**
 * Eval speed on LoCoMo-dev (999 QA cases over 2,760 turns):
 *  - cold eval: all 999 cases through the engine (query vectors batched from the embedder /
 *    workspace cache, the vectors of the memories already in the store, no gather cache), goal
 *    ≤ 0.5 s, with where the time goes (the eval's `timings`), CPU time and the load average; the
 *    same candidates as one recall per case, and as FTS5's bm25() for the lexical arm;
 *  - replay: every case from the cached candidates (re-score + metrics), goal ≤ 1 s;
 *  - tune: 1,000 configs × 999 cases re-scoring compiled candidate features, goal ≤ 20 s.
 * Needs ../shared/data/locomo (skipped with a message otherwise). In smoke mode it runs on a tiny generated
 * LoCoMo-shaped file instead (two conversations, a few QA items), so it never depends on ../shared.
 */
import fs from 'node:fs'
import path from 'node:path'
import { getPreset } from '../src/shared/presets'
import { createEmbedder } from '../src/main/embed/index'
import { caseConfig, gatherCases, scoreGathered, zeroGatherMs, type GatherMs } from '../src/main/eval/replay'
import { gatherRecallSync, prepareVector } from '../src/main/recall/engine'
import { armTexts } from '../src/shared/cue'
import { formatPhases } from '../src/shared/eval'
import { tune } from '../src/main/eval/tune'
import { withBackgroundJob } from './background'
import { importLocomo } from '../src/main/store/importers/locomo'
import { openSource } from '../src/main/store/registry'
import { bm25Settings } from '../src/main/store/sqlite/bm25'
import { LOCOMO_DEV, sharedDataPath } from '../test/helpers/sharedData'
import { GOALS } from './goals'
import { check, measure, skipBench, statusWord, verdict } from './report'
import { scaled, SMOKE } from './scale'
import { CACHE, fmtMs, loadLine, median } from './util'

export async function runEvalBench(): Promise<void> {
  fs.mkdirSync(CACHE, { recursive: true })
  const input = SMOKE ? writeTinyLocomo(path.join(CACHE, 'locomo-tiny.json')) : sharedDataPath(LOCOMO_DEV)
  if (!input) {
    return skipBench(`../shared/${LOCOMO_DEV} is absent (the LoCoMo data ships in ../shared for developers and CI)`)
  }
  const db = path.join(CACHE, SMOKE ? 'locomo-tiny.db' : 'locomo-dev.db')
  if (!fs.existsSync(db)) {
    process.stdout.write(`importing ${path.basename(input)} (once)… `)
    const r = await importLocomo({ input, output: db, now: 0 })
    console.log(`${r.written.memories} turns, ${r.written.evalCases} cases`)
  }
  const store = openSource({ path: db })
  try {
    const cases = store.workspace.loadCases()
    // The default preset as a new user starts; tune searches the whole space (mode, pool, budget… included).
    const config = getPreset('fieldguide').config
    const embedder = createEmbedder('hashing')
    const now = Date.UTC(2030, 0, 1)

    // The first pass on the store as opened: it loads the vector index and builds the JS BM25 index
    // (both kept by the store while it is open), and compiles the prepared statements.
    let t0 = performance.now()
    await gatherCases(store, cases, config, { embedder, now })
    console.log(`  first pass after opening the store (loads the vector index, builds the BM25 index): ${fmtMs(performance.now() - t0)}`)
    // The lexical arm two ways: FTS5's bm25() (the reference) and the same formula in JS over the
    // index's own numbers (src/main/store/sqlite/bm25.ts, used for small scopes). Timed alternately.
    const coldFts: number[] = []
    const cold: number[] = []
    const cpu: number[] = []
    const phases: GatherMs[] = []
    const load0 = loadLine()
    let gathered = await gatherCases(store, cases, config, { embedder, now })
    let reference = gathered
    for (let i = 0; i < 5; i++) {
      if (i < 3) {
        bm25Settings.enabled = false
        t0 = performance.now()
        reference = await gatherCases(store, cases, config, { embedder, now })
        coldFts.push(performance.now() - t0)
        bm25Settings.enabled = true
      }
      const ms = zeroGatherMs()
      const c0 = process.cpuUsage()
      t0 = performance.now()
      gathered = await gatherCases(store, cases, config, { embedder, now, ms })
      cold.push(performance.now() - t0)
      const c = process.cpuUsage(c0)
      cpu.push((c.user + c.system) / 1000)
      phases.push(ms)
    }
    const load1 = loadLine()
    // Every case's lexical top-k (ids in lexical-rank order) compared; each difference printed.
    const lexTop = (g: (typeof gathered)[number]) =>
      g.candidates
        .filter((c) => c.lexicalRank !== null)
        .sort((a, b) => a.lexicalRank! - b.lexicalRank!)
        .map((c) => c.id)
    let diffs = 0
    let maxRel = 0
    for (let i = 0; i < gathered.length; i++) {
      const a = lexTop(reference[i])
      const b = lexTop(gathered[i])
      if (a.length !== b.length || a.some((id, j) => id !== b[j])) {
        diffs++
        const at = a.findIndex((id, j) => id !== b[j])
        console.log(
          `  lexical difference, case ${gathered[i].case.id}: from rank ${at + 1}, FTS5 ${a.slice(at, at + 3).join(' ')} vs JS ${b.slice(at, at + 3).join(' ')}`,
        )
      }
      const bmA = new Map(reference[i].candidates.map((c) => [c.id, c.bm25]))
      for (const c of gathered[i].candidates) {
        const r = bmA.get(c.id)
        if (c.bm25 !== null && r !== null && r !== undefined && r !== 0) maxRel = Math.max(maxRel, Math.abs((c.bm25 - r) / r))
      }
    }
    const mFts = scoreGathered(reference, config, { k: 10, budget: 2000 }).metrics
    const mJs = scoreGathered(gathered, config, { k: 10, budget: 2000 }).metrics
    const dR = Math.abs((mJs['recall@10'] ?? 0) - (mFts['recall@10'] ?? 0)) * 100
    const sameTop = check({
      name: 'lexical top-k, JS bm25 = FTS5 bm25() (cases)',
      passed: cases.length - diffs,
      total: cases.length,
      goal: GOALS['eval.lexical'],
    })
    measure({ name: 'largest relative bm25 difference, JS vs FTS5', value: maxRel, unit: 'fraction' })
    const delta = measure({ name: 'recall@10 difference, JS bm25 vs FTS5', value: dR, unit: 'points', goal: GOALS['eval.recall'] })
    console.log(
      `  lexical arm, JS bm25 vs FTS5 bm25(): ${cases.length - diffs}/${cases.length} cases with the same top-k in the same order (${statusWord(sameTop)}); largest relative bm25 difference ${maxRel.toExponential(1)}; recall@10 ${mJs['recall@10']?.toFixed(4)} vs ${mFts['recall@10']?.toFixed(4)} (Δ ${dR.toFixed(2)} points, ${verdict(delta)})`,
    )
    const gf = median(coldFts)
    console.log(`  engine pass with FTS5 bm25() (the old path): median of 3 ${fmtMs(gf)}`)
    // The batched gather against one recall per case (gatherRecallSync, no shared reads): every candidate, arm and number.
    let sameCases = 0
    for (let i = 0; i < cases.length; i++) {
      const c = cases[i]
      const cfg = caseConfig(config, c)
      const prepared = await prepareVector(store, armTexts(c.query, c.cue, cfg.cueUse).dense, { embedder })
      const one = gatherRecallSync(store, { text: c.query, cue: c.cue }, cfg, c.now ?? now, { prepared })
      const g = gathered[i]
      if (JSON.stringify([one.candidates, one.arms, one.mode, one.degraded]) === JSON.stringify([g.candidates, g.arms, g.mode, g.degraded])) sameCases++
      else console.log(`  batched gather differs from one recall, case ${c.id}`)
    }
    const sameBatch = check({ name: 'batched gather = one recall per case (cases)', passed: sameCases, total: cases.length, goal: 'all' })
    console.log(
      `  batched gather vs one recall per case: ${sameCases}/${cases.length} cases with the same candidates, arms and numbers (${statusWord(sameBatch)})`,
    )
    const replay: number[] = []
    let metrics: Record<string, number | null> = {}
    for (let i = 0; i < 5; i++) {
      const t = performance.now()
      metrics = scoreGathered(gathered, config, { k: 10, budget: 2000 }).metrics
      replay.push(performance.now() - t)
    }
    const rm = median(replay)
    const gm = median(cold)
    console.log(
      `${cases.length} LoCoMo cases, default preset (hashing-256 + FTS5 bm25), k = 10: recall@10 ${metrics['recall@10']?.toFixed(4)} · locomo@10 ${metrics['locomo@10']?.toFixed(4)}`,
    )
    if (metrics['recall@10'] !== null && metrics['recall@10'] !== undefined)
      measure({ name: 'recall@10, default preset', value: metrics['recall@10'], unit: 'fraction' })
    const coldFig = measure({
      name: `cold eval: query vectors + engine over the ${cases.length} cases, median of 5`,
      value: gm,
      unit: 'ms',
      goal: GOALS['eval.cold'],
      peer: { name: 'the same pass with FTS5 bm25()', value: gf },
    })
    console.log(
      `  cold eval (query vectors + engine, every case, no gather cache): median of 5 ${fmtMs(gm)} (${cold.map((x) => fmtMs(x)).join(', ')}; CPU ${cpu.map((x) => fmtMs(x)).join(', ')}; ${fmtMs(gm / cases.length)} per case; ${(gf / gm).toFixed(2)}× the FTS5 bm25() pass)  ${verdict(coldFig)}`,
    )
    measure({ name: 'cold eval: CPU time (user + system), median of 5', value: median(cpu), unit: 'ms' })
    console.log(`  ${load0} before, ${load1} after`)
    // Where a pass goes (the eval's own timings; the median pass by wall time).
    const mid = phases[cold.indexOf([...cold].sort((a, b) => a - b)[cold.length >> 1])]
    const sc = scoreGathered(gathered, config, { k: 10, budget: 2000 })
    console.log(
      `  where the median pass went: ${formatPhases({ ...mid, fusionMs: sc.fusionMs, metricsMs: sc.metricsMs })} (fusion and metrics: one scoring of the gathered cases)`,
    )
    const replayFig = measure({ name: 'replay from cached candidates (rerank + metrics), median of 5', value: rm, unit: 'ms', goal: GOALS['eval.replay'] })
    console.log(`  replay from cached candidates (rerank + metrics, all cases): median of 5 ${fmtMs(rm)}  ${verdict(replayFig)}`)

    // Tune: every case on the train side, so each config scores all 999.
    const allTrain = gathered.map((g) => ({ ...g, case: { ...g.case, split: 'train' as const } }))
    t0 = performance.now()
    const cpu0 = process.cpuUsage()
    const rep = await tune(allTrain, config, { metric: 'recall@10', budget: scaled(1000, 20), seed: 1 })
    const ms = performance.now() - t0
    const tuneCpu = process.cpuUsage(cpu0)
    // On a shared machine wall time includes waiting for a core: CPU time is what the tune itself cost.
    console.log(`  tune CPU time (user + system): ${fmtMs((tuneCpu.user + tuneCpu.system) / 1000)} for ${fmtMs(ms)} wall`)
    measure({ name: 'tune CPU time (user + system)', value: (tuneCpu.user + tuneCpu.system) / 1000, unit: 'ms' })
    measure({ name: 'tune speed', value: rep.timings.configsPerSec, unit: 'configs/s' })
    const tuneFig = measure({ name: 'tune, configs × cases, wall', value: ms, unit: 'ms', goal: GOALS['eval.tune'] })
    console.log(
      `  tune: ${rep.trials} configs × ${allTrain.length} cases in ${fmtMs(rep.timings.searchMs)} search (${fmtMs(ms)} with heatmap + report) · ${Math.round(rep.timings.configsPerSec)} configs/s · ${((rep.trials * allTrain.length) / rep.timings.searchMs / 1000).toFixed(2)} M case-scorings/s  ${verdict(tuneFig)}`,
    )
    console.log(`  tuned recall@10 ${rep.best.train?.toFixed(4)} (base ${rep.base.train?.toFixed(4)})`)
    // The same tune while another one runs in the app's job worker.
    const bg = await withBackgroundJob(async () => {
      const t = performance.now()
      const r = await tune(allTrain, config, { metric: 'recall@10', budget: scaled(1000, 20), seed: 1 })
      return { ms: performance.now() - t, same: r.best.train === rep.best.train && r.trials === rep.trials }
    })
    const busy = measure({ name: 'tune while another tune runs in the job worker, wall', value: bg.out.ms, unit: 'ms', goal: GOALS['eval.tuneBusy'] })
    const same = check({ name: 'tune while another runs: the same result', passed: bg.out.same ? 1 : 0, total: 1, goal: 'all' })
    console.log(
      `  tune while another tune runs in the job worker: ${fmtMs(bg.out.ms)}  ${verdict(busy)} (same result: ${bg.out.same ? 'yes' : 'NO'} ${statusWord(same)})`,
    )
  } finally {
    store.close()
  }
}

/**
 * A LoCoMo-shaped file small enough for smoke mode: two conversations of three sessions, each turn
 * mentioning a topic word, and QA items whose evidence points at the turns that mention it.
 */
function writeTinyLocomo(file: string): string {
  const topics = ['kayak', 'puppy', 'garden', 'violin', 'marathon', 'bakery']
  const convs = [0, 1].map((c) => {
    const conversation: Record<string, unknown> = { speaker_a: 'Ann', speaker_b: 'Bob' }
    const qa: { question: string; answer: string; evidence: string[]; category: number }[] = []
    for (let s = 1; s <= 3; s++) {
      conversation[`session_${s}_date_time`] = `1:56 pm on ${s + 7} May, 2023`
      conversation[`session_${s}`] = topics.map((t, i) => ({
        speaker: i % 2 ? 'Bob' : 'Ann',
        dia_id: `D${s}:${i + 1}`,
        text: `${i % 2 ? 'Bob' : 'Ann'} talks about the ${t} again, part ${s} of conversation ${c}.`,
      }))
    }
    for (const [i, t] of topics.entries())
      qa.push({ question: `What did they say about the ${t}?`, answer: t, evidence: [`D1:${i + 1}`, `D3:${i + 1}`], category: 1 + (i % 4) })
    return { sample_id: `conv-tiny-${c}`, conversation, qa }
  })
  fs.writeFileSync(file, JSON.stringify(convs))
  return file
}
