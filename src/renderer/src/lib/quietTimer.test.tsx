/** A debounce for edits that come every frame: one run, `ms` after the last poke; none after unmount. */
import { afterEach, describe, expect, it, vi } from 'vitest'
import { cleanup, render } from '@testing-library/react'
import { useEffect } from 'react'
import { createQuietTimer, useQuietTimer } from './quietTimer'

afterEach(() => {
  cleanup()
  vi.useRealTimers()
})

describe('quiet timer', () => {
  it('runs the last poked function once, ms after the last poke', () => {
    vi.useFakeTimers()
    const t = createQuietTimer(250)
    const ran: number[] = []
    t.poke(() => ran.push(1))
    vi.advanceTimersByTime(200)
    t.poke(() => ran.push(2))
    vi.advanceTimersByTime(200)
    expect(ran).toEqual([]) // 400 ms after the first poke, 200 after the last
    vi.advanceTimersByTime(60)
    expect(ran).toEqual([2])
    vi.advanceTimersByTime(1000)
    expect(ran).toEqual([2])
  })

  it('cancel drops a pending run; a later poke arms it again', () => {
    vi.useFakeTimers()
    const t = createQuietTimer(100)
    const ran: string[] = []
    t.poke(() => ran.push('a'))
    t.cancel()
    vi.advanceTimersByTime(500)
    expect(ran).toEqual([])
    t.poke(() => ran.push('b'))
    vi.advanceTimersByTime(101)
    expect(ran).toEqual(['b'])
  })

  it('useQuietTimer: an effect poking on each change runs once for a burst, and never after unmount', () => {
    vi.useFakeTimers()
    const ran: number[] = []
    function Probe({ v }: { v: number }) {
      const t = useQuietTimer(250)
      useEffect(() => t.poke(() => ran.push(v)), [v, t])
      return null
    }
    const r = render(<Probe v={1} />)
    r.rerender(<Probe v={2} />)
    r.rerender(<Probe v={3} />)
    vi.advanceTimersByTime(300)
    expect(ran).toEqual([3])
    r.rerender(<Probe v={4} />)
    r.unmount()
    vi.advanceTimersByTime(1000)
    expect(ran).toEqual([3])
  })
})
