import { describe, expect, it } from 'vitest'
import { RecallscopeError } from '../../shared/result'
import { CpuPool } from './cpuPool'

/** A job that ends when its `end` is called. */
function gate(): { job: () => Promise<string>; end: () => void; started: () => boolean } {
  let started = false
  let end: () => void = () => undefined
  const done = new Promise<string>((r) => (end = () => r('done')))
  return {
    job: () => {
      started = true
      return done
    },
    end: () => end(),
    started: () => started,
  }
}

const codeOf = (p: Promise<unknown>) =>
  p.then(
    () => 'ok',
    (e: unknown) => (e instanceof RecallscopeError ? e.code : 'untyped'),
  )

describe('CpuPool', () => {
  it('runs at most `size` at once, queues in order up to maxQueued, refuses past that with BUSY', async () => {
    const pool = new CpuPool(2, 2)
    const g = Array.from({ length: 5 }, gate)
    const positions: number[] = []
    const runs = g.map((x) => pool.run(x.job, { onQueued: (n) => positions.push(n) }))
    await Promise.resolve()
    expect(g.map((x) => x.started())).toEqual([true, true, false, false, false])
    expect(pool.stats()).toMatchObject({ running: 2, queued: 2, refused: 1 })
    expect(positions).toEqual([1, 2])
    expect(await codeOf(runs[4])).toBe('BUSY')
    g[1].end()
    await runs[1]
    await Promise.resolve()
    // the first in line starts, not the second
    expect(g.map((x) => x.started())).toEqual([true, true, true, false, false])
    for (const x of g) x.end()
    expect(await Promise.all(runs.slice(0, 4))).toEqual(['done', 'done', 'done', 'done'])
    expect(pool.stats()).toEqual({ running: 0, queued: 0, peak: 2, refused: 1 })
  })

  it('a queued job whose signal aborts leaves the queue CANCELLED without starting; a failed job frees its slot', async () => {
    const pool = new CpuPool(1, 4)
    const first = gate()
    const running = pool.run(first.job)
    const ac = new AbortController()
    const waiting = gate()
    const queued = pool.run(waiting.job, { signal: ac.signal })
    ac.abort()
    expect(await codeOf(queued)).toBe('CANCELLED')
    expect(pool.stats().queued).toBe(0)
    first.end()
    await running
    expect(waiting.started()).toBe(false)
    expect(await codeOf(pool.run(() => Promise.reject(new RecallscopeError('INTERNAL', 'boom'))))).toBe('INTERNAL')
    expect(pool.stats().running).toBe(0)
    expect(await pool.run(() => Promise.resolve(7))).toBe(7)
  })
})
