/** A setter applied once per animation frame, with the last value it got in that frame. */
import { afterEach, describe, expect, it, vi } from 'vitest'
import { cleanup, render } from '@testing-library/react'
import { useFrameCoalesced } from './useFrameCoalesced'

afterEach(() => {
  cleanup()
  vi.restoreAllMocks()
})

describe('useFrameCoalesced', () => {
  it('applies the last of several values given within one frame, once, in that frame; the next frame again', () => {
    const frames: FrameRequestCallback[] = []
    vi.spyOn(window, 'requestAnimationFrame').mockImplementation((cb) => frames.push(cb))
    const applied: number[] = []
    let set: (v: number) => void = () => undefined
    function Probe() {
      set = useFrameCoalesced((v: number) => applied.push(v))
      return null
    }
    render(<Probe />)
    set(1)
    set(2)
    set(3)
    expect(applied).toEqual([])
    expect(frames).toHaveLength(1)
    frames.shift()!(0)
    expect(applied).toEqual([3])
    set(4)
    expect(frames).toHaveLength(1)
    frames.shift()!(16)
    expect(applied).toEqual([3, 4])
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
    set(1)
    r.unmount()
    expect(cancel).toHaveBeenCalledWith(7)
  })
})
