/**
 * `npm run bench [-- NAME…] [-- --smoke]`: benchmarks that print medians and ratios measured
 * in one run on this machine. Without names, runs them all.
 * Large fixtures are generated once into .bench-cache/ (git-ignored) and reused.
 * `--smoke` runs every bench on tiny inputs (bench/scale.ts): seconds, numbers meaningless; `npm test`
 * runs it (test/benchSmoke.test.ts) so a bench that stops loading or running fails CI.
 * A bench that throws does not stop the others; the exit code is 1 if any threw.
 */
import { BENCHES } from './registry'
import { SMOKE } from './scale'

async function main() {
  const names = process.argv.slice(2).filter((a) => !a.startsWith('-'))
  const todo = names.length ? BENCHES.filter((b) => names.includes(b.name)) : BENCHES
  const unknown = names.filter((n) => !BENCHES.some((b) => b.name === n))
  if (unknown.length) {
    console.error(`Unknown bench: ${unknown.join(', ')}. Available: ${BENCHES.map((b) => b.name).join(', ')}`)
    process.exit(2)
  }
  if (SMOKE) console.log('SMOKE MODE: tiny inputs; the numbers below say nothing about performance.')
  const failed: string[] = []
  for (const b of todo) {
    console.log(`\n## ${b.name} — ${b.title}`)
    const t0 = performance.now()
    try {
      await b.run()
    } catch (e) {
      failed.push(b.name)
      console.error(`bench ${b.name} FAILED:`, e)
    }
    console.log(`(${((performance.now() - t0) / 1000).toFixed(1)} s)`)
  }
  if (failed.length) {
    console.error(`\n${failed.length} bench${failed.length === 1 ? '' : 'es'} failed: ${failed.join(', ')}`)
    process.exit(1)
  }
  // Scan-pool worker threads and the like must not keep a finished run alive.
  process.exit(0)
}

main().catch((e) => {
  console.error(e)
  process.exit(1)
})
