/** A setter applied once per animation frame, with the last value it got in that frame; a discrete event's at once. */
import { afterEach, describe, expect, it, vi } from 'vitest'
import { useState } from 'react'
import { cleanup, fireEvent, render } from '@testing-library/react'
import { useFrameCoalesced } from './useFrameCoalesced'

afterEach(() => {
  cleanup()
  vi.restoreAllMocks()
})

/** Calls `fn` while an event of this type is dispatched on `target` (window.event is that event). */
function during(type: string, target: EventTarget, fn: () => void) {
  target.addEventListener(type, fn, { once: true })
  target.dispatchEvent(new Event(type))
}

describe('useFrameCoalesced', () => {
  it('applies the last of several values given within one frame by input events, once, in that frame; the next frame again', () => {
    const frames: FrameRequestCallback[] = []
    vi.spyOn(window, 'requestAnimationFrame').mockImplementation((cb) => frames.push(cb))
    const applied: number[] = []
    let set: (v: number) => void = () => undefined
    function Probe() {
      set = useFrameCoalesced((v: number) => applied.push(v))
      return null
    }
    render(<Probe />)
    const field = document.body.appendChild(document.createElement('input'))
    during('input', field, () => set(1))
    during('input', field, () => set(2))
    during('input', field, () => set(3))
    expect(applied).toEqual([])
    expect(frames).toHaveLength(1)
    frames.shift()!(0)
    expect(applied).toEqual([3])
    during('pointermove', field, () => set(4))
    expect(frames).toHaveLength(1)
    frames.shift()!(16)
    expect(applied).toEqual([3, 4])
    // A range input's change (a slider let go, or a test's fireEvent.change) waits for the frame like its input.
    const range = document.body.appendChild(document.createElement('input'))
    range.type = 'range'
    during('change', range, () => set(5))
    expect(applied).toEqual([3, 4])
    frames.shift()!(32)
    expect(applied).toEqual([3, 4, 5])
  })

  it('applies a discrete event at once, with the value pending before it, so a controlled checkbox never shows its old state', () => {
    const frames: FrameRequestCallback[] = []
    vi.spyOn(window, 'requestAnimationFrame').mockImplementation((cb) => frames.push(cb))
    const cancel = vi.spyOn(window, 'cancelAnimationFrame')
    const applied: string[] = []
    let set: (v: string) => void = () => undefined
    function Probe() {
      set = useFrameCoalesced(
        (v: string) => applied.push(v),
        (a, b) => `${a}+${b}`,
      )
      return null
    }
    render(<Probe />)
    const range = document.body.appendChild(document.createElement('input'))
    range.type = 'range'
    during('input', range, () => set('slide'))
    expect(applied).toEqual([])
    const box = document.body.appendChild(document.createElement('input'))
    box.type = 'checkbox'
    during('click', box, () => set('tick'))
    expect(applied).toEqual(['slide+tick'])
    expect(cancel).toHaveBeenCalled()
    set('no event')
    expect(applied).toEqual(['slide+tick', 'no event'])
  })

  it('a controlled checkbox set through it is unticked as soon as it is clicked (no frame runs)', () => {
    vi.spyOn(window, 'requestAnimationFrame').mockImplementation(() => 1)
    function Box() {
      const [on, setOn] = useState(true)
      const set = useFrameCoalesced((v: boolean) => setOn(v))
      return <input type="checkbox" aria-label="on" checked={on} onChange={(e) => set(e.target.checked)} />
    }
    const r = render(<Box />)
    const box = r.getByLabelText('on') as HTMLInputElement
    fireEvent.click(box)
    expect(box.checked).toBe(false)
  })

  it('drops a pending value when the component goes away', () => {
    const cancel = vi.spyOn(window, 'cancelAnimationFrame')
    vi.spyOn(window, 'requestAnimationFrame').mockImplementation(() => 7)
    let set: (v: number) => void = () => undefined
    function Probe() {
      set = useFrameCoalesced(() => undefined)
      return null
    }
    const r = render(<Probe />)
    const field = document.body.appendChild(document.createElement('input'))
    during('input', field, () => set(1))
    r.unmount()
    expect(cancel).toHaveBeenCalledWith(7)
  })
})
