/**
 * Follow a background job (eval.run, eval.tune): progress events pushed by main,
 * plus a slow poll of `jobs.get` so a renderer that missed an event (the browser
 * bridge's stream reconnecting, a job faster than the subscription) still sees
 * the end and the result.
 */
import { useCallback, useEffect, useRef, useState } from 'react'
import type { JobProgress } from '../../../../shared/api'
import { bridge, call } from '../../lib/api'

export interface JobState<T> {
  job: JobProgress | null
  running: boolean
  result: T | null
  error: string | null
  /** start a job: `launch` calls the channel that returns its JobProgress */
  start: (launch: () => Promise<JobProgress>) => Promise<void>
  cancel: () => void
  reset: () => void
}

export function useJob<T>(onDone?: (result: T) => void): JobState<T> {
  const [job, setJob] = useState<JobProgress | null>(null)
  const [result, setResult] = useState<T | null>(null)
  const [error, setError] = useState<string | null>(null)
  const current = useRef<string | null>(null)
  // The latest onDone, read when a job ends (the caller's closure changes every render; the subscription must not).
  const doneRef = useRef(onDone)
  useEffect(() => {
    doneRef.current = onDone
  })
  const finished = useRef(new Set<string>())

  const accept = useCallback((p: JobProgress) => {
    if (p.jobId !== current.current) return
    setJob(p)
    if (p.state === 'running' || finished.current.has(p.jobId)) return
    finished.current.add(p.jobId)
    if (p.state === 'done') {
      if (p.result === undefined) {
        // Pushed events may omit a large result: fetch it.
        void call('jobs.get', { jobId: p.jobId }).then((full) => {
          setResult(full.result as T)
          doneRef.current?.(full.result as T)
        })
      } else {
        setResult(p.result as T)
        doneRef.current?.(p.result as T)
      }
    } else setError(p.error ? `${p.state === 'cancelled' ? 'Cancelled' : 'Failed'}: ${p.error.message}` : p.state)
  }, [])

  useEffect(() => bridge.onJobProgress(accept), [accept])

  // Poll only while running, and restart only when the job or its state changes (not on every progress event).
  const jobId = job?.jobId
  const running = job?.state === 'running'
  useEffect(() => {
    if (!jobId || !running) return
    const timer = setInterval(() => {
      call('jobs.get', { jobId }).then(accept, () => undefined)
    }, 700)
    return () => clearInterval(timer)
  }, [jobId, running, accept])

  const start = useCallback(async (launch: () => Promise<JobProgress>) => {
    setError(null)
    setResult(null)
    try {
      const p = await launch()
      current.current = p.jobId
      setJob(p)
    } catch (e) {
      setError((e as Error).message)
    }
  }, [])
  const cancel = useCallback(() => {
    if (current.current) void call('jobs.cancel', { jobId: current.current }).catch(() => undefined)
  }, [])
  const reset = useCallback(() => {
    current.current = null
    setJob(null)
    setResult(null)
    setError(null)
  }, [])
  return { job, running, result, error, start, cancel, reset }
}
