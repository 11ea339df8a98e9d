/**
 * The e2e variant of test/helpers/fileCpu.ts (vitest.config.mts adds it to both e2e projects when
 * RECALLSCOPE_TEST_CPU_LOG names a file): besides the worker and the children it reaped during the file (its
 * `serve` processes), it counts the worker's Chromium, which lives on from file to file (harness.ts) and so is
 * never reaped by one: the CPU its processes used during the file (each live descendant's own time and the time of
 * the processes it reaped, read from /proc). How to read the numbers: docs/internals/testing.md ("Where the e2e CPU goes").
 */
import fs from 'node:fs'
import path from 'node:path'
// oxlint-disable-next-line no-restricted-imports -- a vitest setup file, never loaded outside vitest
import { afterAll, beforeAll } from 'vitest'
import { startFileCpu } from '../helpers/cpuTime'

const LOG = process.env.RECALLSCOPE_TEST_CPU_LOG

/** Seconds of CPU of this process's live Chromium processes, with what they reaped (Linux /proc; 0 elsewhere). */
function readChromiumSeconds(): number {
  const parent = new Map<number, number>()
  const cpu = new Map<number, number>()
  const chromium = new Set<number>()
  let pids: string[]
  try {
    pids = fs.readdirSync('/proc').filter((d) => /^\d+$/.test(d))
  } catch {
    return 0
  }
  for (const d of pids) {
    try {
      const stat = fs.readFileSync(`/proc/${d}/stat`, 'utf8')
      const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
      parent.set(Number(d), Number(f[1]))
      // utime, stime, cutime, cstime in USER_HZ (1/100 s)
      cpu.set(Number(d), (Number(f[11]) + Number(f[12]) + Number(f[13]) + Number(f[14])) / 100)
      if (/chrom|headless_shell/.test(path.basename(fs.readlinkSync(`/proc/${d}/exe`)))) chromium.add(Number(d))
    } catch {
      // gone meanwhile, or not ours to read
    }
  }
  let sum = 0
  for (const pid of chromium) {
    // only the processes below this worker whose parent is not a Chromium process already counted (cutime covers reaped ones)
    let p = parent.get(pid)
    if (p !== undefined && chromium.has(p)) continue
    while (p !== undefined && p > 1 && p !== process.pid) p = parent.get(p)
    if (p === process.pid) sum += cpu.get(pid)! + descendantsOf(pid, parent, cpu)
  }
  return sum
}

function descendantsOf(root: number, parent: Map<number, number>, cpu: Map<number, number>): number {
  let sum = 0
  for (const [pid, pp] of parent) if (pp === root) sum += cpu.get(pid)! + descendantsOf(pid, parent, cpu)
  return sum
}

if (LOG) {
  const finish = startFileCpu({ chromium: readChromiumSeconds })
  let file = ''
  // oxlint-disable-next-line no-empty-pattern -- vitest reads the first parameter as fixtures (it must destructure); the file is the second
  beforeAll(({}, suite) => {
    file = path.relative(process.cwd(), suite.file.filepath)
  })
  afterAll(() => fs.appendFileSync(LOG, finish(file)))
}
