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
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [...deps, tick, enabled])
  return { data, error, loading, reload: () => setTick((t) => t + 1) }
}
