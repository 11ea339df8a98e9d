import { useEffect, useRef, useState } from 'react'

export interface AsyncState<T> {
  data: T | undefined
  error: Error | undefined
  loading: boolean
  reload: () => void
}

/**
 * Run an async function when its deps change; keep the previous data while
 * reloading (no layout jumps); ignore answers that arrive out of order.
 */
export function useAsync<T>(fn: () => Promise<T>, deps: unknown[], opts: { enabled?: boolean } = {}): AsyncState<T> {
  const [data, setData] = useState<T>()
  const [error, setError] = useState<Error>()
  const [loading, setLoading] = useState(false)
  const [tick, setTick] = useState(0)
  const seq = useRef(0)
  const enabled = opts.enabled ?? true
  useEffect(() => {
    if (!enabled) return
    const mine = ++seq.current
    // The request starts here, so this is where `loading` turns on; the previous data stays on screen meanwhile.
    // eslint-disable-next-line react-hooks/set-state-in-effect -- marks the start of the request this effect sends
    setLoading(true)
    fn().then(
      (d) => {
        if (mine !== seq.current) return
        setData(d)
        setError(undefined)
        setLoading(false)
      },
      (e: Error) => {
        if (mine !== seq.current) return
        setError(e)
        setLoading(false)
      },
    )
    // `deps` is the caller's list for `fn` (as with useEffect itself): the rule cannot read a spread, and `fn` is
    // a new closure every render, so listing it would refetch on every render.
    // eslint-disable-next-line react-hooks/exhaustive-deps -- the caller's deps stand for fn, see above
  }, [...deps, tick, enabled])
  return { data, error, loading, reload: () => setTick((t) => t + 1) }
}
