/**
 * `recallscope serve` as a child process (browser mode), for the e2e harness and the node tests that need a real
 * server process; without Playwright, so a node test that only starts a server does not load it (~0.5 s of CPU).
 */
import { spawn, type ChildProcess } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'

const ROOT = path.resolve(__dirname, '../..')

export interface Served {
  url: string
  token: string
  port: number
  proc: ChildProcess
  home: string
  stop(): Promise<void>
}

/** Start browser mode. `args` e.g. ['--db', file] or ['--demo']. */
export async function serve(args: string[], env: Record<string, string> = {}): Promise<Served> {
  const home = fs.mkdtempSync(path.join(os.tmpdir(), 'recallscope-e2e-home-'))
  const proc = spawn(process.execPath, [path.join(ROOT, 'bin/recallscope.cjs'), 'serve', '--json', ...args], {
    cwd: ROOT,
    env: { ...process.env, RECALLSCOPE_HOME: home, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let stderr = ''
  proc.stderr.on('data', (d) => (stderr += d))
  const info = await new Promise<{ url: string; token: string; port: number }>((resolve, reject) => {
    let buf = ''
    const timer = setTimeout(() => reject(new Error(`serve did not start in 60 s. stderr:\n${stderr}`)), 60_000)
    proc.stdout.on('data', (d) => {
      buf += d
      const line = buf.split('\n').find((l) => l.startsWith('{'))
      if (line) {
        clearTimeout(timer)
        resolve(JSON.parse(line) as { url: string; token: string; port: number })
      }
    })
    proc.on('exit', (code) => reject(new Error(`serve exited with ${code}. stderr:\n${stderr}`)))
  })
  return {
    ...info,
    proc,
    home,
    async stop() {
      // A process ended by a signal has signalCode set and exitCode null: it is gone all the same.
      if (proc.exitCode === null && proc.signalCode === null) {
        proc.kill('SIGTERM')
        await new Promise((r) => proc.once('exit', r))
      }
      fs.rmSync(home, { recursive: true, force: true })
    },
  }
}
