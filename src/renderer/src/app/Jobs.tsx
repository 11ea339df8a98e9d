/**
 * Background jobs (embedding backfill, import, eval runs, tuning): a top-bar
 * indicator with a progress bar per job and Cancel. Progress arrives as events
 * (IPC in the desktop app, a server-sent stream in browser mode).
 */
import { usePopover } from '../lib/usePopover'
import type { JobProgress } from '../../../shared/api'
import { call } from '../lib/api'
import { useJobs } from '../lib/jobs'

export function JobBar({ job, onCancel }: { job: JobProgress; onCancel?: () => void }) {
  const pct = job.total > 0 ? Math.min(100, (100 * job.done) / job.total) : job.state === 'running' ? 0 : 100
  return (
    <div className={`job ${job.state}`} data-job={job.jobId}>
      <div className="row" style={{ justifyContent: 'space-between' }}>
        <strong className="small">{job.label}</strong>
        <span className="small muted">
          {job.state === 'running' ? (job.total > 0 ? `${job.done.toLocaleString('en-US')} / ${job.total.toLocaleString('en-US')}` : 'starting…') : job.state}
        </span>
      </div>
      <div className="jobbar" role="progressbar" aria-label={job.label} aria-valuemin={0} aria-valuemax={100} aria-valuenow={Math.round(pct)}>
        <span className="jobbar-fill" style={{ width: `${pct}%` }} />
      </div>
      {job.message && <div className="small muted">{job.message}</div>}
      {job.error && <div className="small error">{job.error.message}</div>}
      {job.state === 'running' && onCancel && (
        <button className="btn small" onClick={onCancel}>
          Cancel
        </button>
      )}
    </div>
  )
}

export function JobsIndicator() {
  const jobs = useJobs()
  const { open, setOpen, ref } = usePopover()
  const running = jobs.filter((j) => j.state === 'running')
  if (jobs.length === 0) return null
  const cur = running[0]
  const pct = cur && cur.total > 0 ? Math.round((100 * cur.done) / cur.total) : null
  return (
    <div className="embedstatus" ref={ref}>
      <button className={`badge ${running.length ? 'accent' : ''}`} aria-label="Background jobs" aria-expanded={open} onClick={() => setOpen((o) => !o)}>
        {running.length ? `${running.length} job${running.length > 1 ? 's' : ''} running${pct !== null ? ` · ${pct}%` : ''}` : 'jobs'}
      </button>
      {open && (
        <div className="popover" role="dialog" aria-label="Jobs">
          {jobs.slice(0, 8).map((j) => (
            <JobBar key={j.jobId} job={j} onCancel={() => void call('jobs.cancel', { jobId: j.jobId })} />
          ))}
        </div>
      )}
    </div>
  )
}
