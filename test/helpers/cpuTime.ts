/**
 * CPU time of this process and of the child processes it has reaped, for per-file (test/helpers/fileCpu.ts) and
 * per-bench (bench/index.ts) figures. Framework-free, so benches can import it.
 */
import fs from 'node:fs'
import os from 'node:os'

/** Seconds of CPU (user + system): `self` = this process with all its threads, `children` = its reaped children. */
export interface CpuSeconds {
  self: number
  children: number
}

/**
 * CPU used so far. `children` comes from /proc/self/stat (cutime + cstime: children that ended and were waited
 * for, Linux only; 0 elsewhere), so a child still running when this is read is not in it yet.
 */
export function readCpuSeconds(): CpuSeconds {
  const u = process.cpuUsage()
  let children: number
  try {
    const stat = fs.readFileSync('/proc/self/stat', 'utf8')
    // The fields after the command name (which may hold spaces, hence the last ')'); cutime and cstime are 16 and 17.
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
    // USER_HZ: the kernel reports these in 1/100 s on every Linux architecture.
    children = (Number(f[13]) + Number(f[14])) / 100
  } catch {
    children = 0
  }
  return { self: (u.user + u.system) / 1e6, children }
}

/**
 * Start measuring one test file (test/helpers/fileCpu.ts, test/e2e/fileCpu.ts): returns the function that ends it
 * with the file's JSON line, `{file, wall, cpu, children, …extra, load, pid}` (each figure the difference since this
 * call, in seconds, rounded to 0.01). `extra` names more CPU readers (seconds so far), e.g. the e2e worker's Chromium.
 */
export function startFileCpu(extra: Record<string, () => number> = {}): (file: string) => string {
  const t0 = performance.now()
  const cpu0 = readCpuSeconds()
  const extra0 = Object.fromEntries(Object.entries(extra).map(([k, read]) => [k, read()]))
  return (file) => {
    const cpu = readCpuSeconds()
    const round = (x: number) => Math.round(x * 100) / 100
    const line = {
      file,
      wall: round((performance.now() - t0) / 1000),
      cpu: round(cpu.self - cpu0.self),
      children: round(cpu.children - cpu0.children),
      ...Object.fromEntries(Object.entries(extra).map(([k, read]) => [k, round(read() - extra0[k])])),
      load: round(os.loadavg()[0]),
      // which test process ran it: files of one pid shared a worker (its start and imports are paid once)
      pid: process.pid,
      // when the file ended (ms since the epoch): with `wall`, the run's timeline (which files ran beside which)
      end: Date.now(),
    }
    return `${JSON.stringify(line)}\n`
  }
}
