/**
 * `npm run bench [-- NAME…]`: benchmarks that print medians and ratios measured
 * in one run on this machine. Without names, runs them all.
 * Large fixtures are generated once into .bench-cache/ (git-ignored) and reused.
 */
import { BENCHES } from './registry'

async function main() {
  const names = process.argv.slice(2).filter((a) => !a.startsWith('-'))
  const todo = names.length ? BENCHES.filter((b) => names.includes(b.name)) : BENCHES
  const unknown = names.filter((n) => !BENCHES.some((b) => b.name === n))
  if (unknown.length) {
    console.error(`Unknown bench: ${unknown.join(', ')}. Available: ${BENCHES.map((b) => b.name).join(', ')}`)
    process.exit(2)
  }
  for (const b of todo) {
    console.log(`\n## ${b.name} — ${b.title}`)
    const t0 = performance.now()
    await b.run()
    console.log(`(${((performance.now() - t0) / 1000).toFixed(1)} s)`)
  }
}

main().catch((e) => {
  console.error(e)
  process.exit(1)
})
