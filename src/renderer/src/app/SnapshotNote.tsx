/**
 * The note shown while the open DB is a read-only snapshot (OpenInfo.snapshot): its folder
 * is not writable, so a WAL DB or one with a leftover -journal was opened from a private
 * copy (issue 10, item 11). What the agent writes from now on is not seen until reopened.
 */
import { SNAPSHOT_NOTE } from '../../../shared/snapshot'

/** The badge in the header. */
export function SnapshotBadge() {
  return (
    <span className="badge warn" title={SNAPSHOT_NOTE} data-testid="snapshot-badge">
      snapshot
    </span>
  )
}

/** The full note (Library). */
export function SnapshotNote() {
  return (
    <div className="notice small" role="note" data-testid="snapshot-note">
      {SNAPSHOT_NOTE.charAt(0).toUpperCase() + SNAPSHOT_NOTE.slice(1)}.
    </div>
  )
}
