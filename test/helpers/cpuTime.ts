/**
 * CPU time of this process and of the child processes it has reaped, for per-file (test/helpers/fileCpu.ts) and
 * per-bench (bench/index.ts) figures. Framework-free, so benches can import it.
 */
import fs from 'node:fs'

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
