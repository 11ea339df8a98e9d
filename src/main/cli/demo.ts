import path from 'node:path'
import { generateDemo } from '../demo/generate'
import { optionalInt, requireString, type Command } from './args'

export const demoCommand: Command = {
  name: 'demo',
  summary: 'Write a realistic, deterministic demo memory DB (3 agents, 8 users, ~6,000 memories)',
  usage: 'recallscope demo --out FILE [--seed N] [--memories N] [--force] [--json]',
  options: { out: { type: 'string' }, seed: { type: 'string' }, memories: { type: 'string' }, force: { type: 'boolean' } },
  run(ctx) {
    const out = requireString(ctx, 'out', this.usage)
    const memories = optionalInt(ctx, 'memories', 50)
    const seed = optionalInt(ctx, 'seed', 0)
    const t0 = performance.now()
    let lastPct = -1
    const r = generateDemo({
      out: path.resolve(out),
      seed,
      memories,
      force: Boolean(ctx.values.force),
      onProgress: (done, total) => {
        const pct = Math.floor((100 * done) / total)
        if (!ctx.json && pct !== lastPct && pct % 10 === 0) {
          lastPct = pct
          ctx.io.err(`  ${pct}% (${done.toLocaleString('en-US')} memories)`)
        }
      },
    })
    const tookMs = Math.round(performance.now() - t0)
    if (ctx.json) ctx.io.out(JSON.stringify({ ok: true, ...r, tookMs }))
    else
      ctx.io.out(
        `Wrote ${r.path}: ${r.memories.toLocaleString('en-US')} memories, ${r.sessions} sessions, ${r.events} recall events in ${(tookMs / 1000).toFixed(1)} s`,
      )
    return 0
  },
}
