/**
 * The renderer's one store of background jobs (import, backfill, eval, tune).
 * Progress pushed by main (IPC, or the bridge's event stream) and every poll of
 * `jobs.get` land here; `useJobs` lists them (the top-bar indicator, the
 * Library) and `useJob` follows the one a view started (Evaluate, Tune), with
 * its typed result. One subscription to the bridge for the whole window.
 */
import { useCallback, useEffect, useRef, useState, useSyncExternalStore } from 'react'
import type { JobKind, JobProgress, JobResults } from '../../../shared/jobs'
import { call, getBridge } from './api'

const jobs = new Map<string, JobProgress>()
const listeners = new Set<() => void>()
let snapshot: JobProgress[] = []
let started = false
let poll: ReturnType<typeof setInterval> | null = null

/**
 * While any job runs, ask main for the list every second as well: a pushed event can be
 * missed (the bridge's stream reconnecting), and a job must never look stuck.
 */
function pollWhileRunning(): void {
  const anyRunning = snapshot.some((j) => j.state === 'running')
  if (anyRunning && !poll)
    poll = setInterval(() => {
      call('jobs.list', {}).then(
        (list) => {
          for (const j of list) publish(j)
        },
        () => undefined,
      )
    }, 1000)
  else if (!anyRunning && poll) {
    clearInterval(poll)
    poll = null
  }
}

/** Take a progress event or a polled state; a later event never loses a result an earlier one carried. */
function publish(p: JobProgress): void {
  const prev = jobs.get(p.jobId)
  if (prev && prev.updatedAt > p.updatedAt) return
  jobs.set(p.jobId, p.result === undefined && prev?.result !== undefined ? { ...p, result: prev.result } : p)
  snapshot = [...jobs.values()].sort((a, b) => b.startedAt - a.startedAt)
  pollWhileRunning()
  for (const l of listeners) l()
}

function subscribe(listener: () => void): () => void {
  if (!started) {
    started = true
    getBridge().onJobProgress(publish)
    call('jobs.list', {}).then(
      (list) => {
        for (const j of list) if (!jobs.has(j.jobId)) publish(j)
      },
      () => undefined,
    )
  }
  listeners.add(listener)
  return () => listeners.delete(listener)
}

/** Ask main for a job's current state (and its result once done). */
function refresh(jobId: string): void {
  call('jobs.get', { jobId }).then(publish, () => undefined)
}

/** Every job known to this window, newest first. */
export function useJobs(): JobProgress[] {
  return useSyncExternalStore(subscribe, () => snapshot)
}

export interface JobState<K extends JobKind> {
  job: JobProgress<K> | null
  running: boolean
  result: JobResults[K] | null
  /** why the job failed (not set when the user cancelled it: see `cancelled`) */
  error: string | null
  /** the user cancelled it: a plain note, not an error */
  cancelled: boolean
  /** start a job: `launch` calls the channel that returns its JobProgress */
  start: (launch: () => Promise<JobProgress>) => Promise<void>
  cancel: () => void
  reset: () => void
}

/**
 * Which job a view follows, by the view's `keep` name, for this window's life: a view
 * that unmounts (the user went to another screen) finds its running or finished job
 * again when it comes back. Also which results were delivered, so `onDone` stays once.
 */
const kept = new Map<string, string | null>()
const deliveredByKeep = new Map<string, Set<string>>()

/**
 * Follow the job a view started: its progress from the store, a slow poll while it
 * runs (so a missed event never hides the end), and `onDone` once with the result.
 * With `keep`, the job outlives the component (see `kept`).
 */
export function useJob<K extends JobKind>(onDone?: (result: JobResults[K]) => void, keep?: string): JobState<K> {
  const [jobId, setJobIdState] = useState<string | null>(() => (keep ? (kept.get(keep) ?? null) : null))
  const setJobId = useCallback(
    (id: string | null) => {
      if (keep) kept.set(keep, id)
      setJobIdState(id)
    },
    [keep],
  )
  const [startError, setStartError] = useState<string | null>(null)
  const job = useSyncExternalStore(subscribe, () => (jobId ? (jobs.get(jobId) ?? null) : null)) as JobProgress<K> | null
  const doneRef = useRef(onDone)
  useEffect(() => {
    doneRef.current = onDone
  })
  const [delivered] = useState(() => {
    if (!keep) return new Set<string>()
    let set = deliveredByKeep.get(keep)
    if (!set) deliveredByKeep.set(keep, (set = new Set<string>()))
    return set
  })

  const running = job?.state === 'running'
  useEffect(() => {
    if (!jobId || !running) return
    const timer = setInterval(() => refresh(jobId), 700)
    return () => clearInterval(timer)
  }, [jobId, running])

  // Done: deliver the result once (pushed events may omit a large result: fetch it).
  useEffect(() => {
    if (!job || job.state !== 'done' || delivered.has(job.jobId)) return
    if (job.result === undefined) return refresh(job.jobId)
    delivered.add(job.jobId)
    doneRef.current?.(job.result)
  }, [job, delivered])

  const start = useCallback(
    async (launch: () => Promise<JobProgress>) => {
      setStartError(null)
      try {
        const p = await launch()
        publish(p)
        setJobId(p.jobId)
      } catch (e) {
        setStartError((e as Error).message)
      }
    },
    [setJobId],
  )
  const cancel = useCallback(() => {
    if (jobId) void call('jobs.cancel', { jobId }).catch(() => undefined)
  }, [jobId])
  const reset = useCallback(() => {
    setJobId(null)
    setStartError(null)
  }, [setJobId])

  const failed = job?.state === 'failed' ? `Failed: ${job.error?.message ?? 'unknown error'}` : null
  const result = job?.state === 'done' && job.result !== undefined ? job.result : null
  return { job, running, result, error: startError ?? failed, cancelled: job?.state === 'cancelled', start, cancel, reset }
}
