/** A value shown at once after a rest, held (pending) through a burst of changes, and shown when the burst rests. */
import { afterEach, describe, expect, it, vi } from 'vitest'
import { act, cleanup, render } from '@testing-library/react'
import { useRestingValue } from './useRestingValue'

afterEach(() => {
  cleanup()
  vi.useRealTimers()
})

function Probe({ value }: { value: string }) {
  const { shown, pending } = useRestingValue(value, 250)
  return <p data-pending={pending}>{shown}</p>
}

describe('useRestingValue', () => {
  it('shows a change after a rest at once, holds the changes of a burst, and shows the last one when it rests', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'performance'] })
    const { rerender, container } = render(<Probe value="a" />)
    const p = () => container.querySelector('p')!
    expect(p().textContent).toBe('a')
    // A single edit after a rest: shown in the same render pass.
    vi.advanceTimersByTime(1000)
    rerender(<Probe value="b" />)
    expect(p().textContent).toBe('b')
    expect(p().dataset.pending).toBe('false')
    // A burst: every 50 ms, faster than the rest (250 ms). The value shown stays, marked pending.
    for (const v of ['c', 'd', 'e', 'f']) {
      vi.advanceTimersByTime(50)
      rerender(<Probe value={v} />)
      expect(p().textContent).toBe('b')
      expect(p().dataset.pending).toBe('true')
    }
    // Not yet rested 250 ms after the last change…
    act(() => {
      vi.advanceTimersByTime(200)
    })
    expect(p().textContent).toBe('b')
    // …then the latest.
    act(() => {
      vi.advanceTimersByTime(60)
    })
    expect(p().textContent).toBe('f')
    expect(p().dataset.pending).toBe('false')
    // And the next edit after the rest is at once again.
    act(() => {
      vi.advanceTimersByTime(300)
    })
    rerender(<Probe value="g" />)
    expect(p().textContent).toBe('g')
  })
})
