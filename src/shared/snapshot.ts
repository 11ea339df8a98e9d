/**
 * What the user is told while the open DB is a read-only snapshot (OpenInfo.snapshot): its
 * folder is not writable, so a WAL DB or one with a leftover -journal was opened from a
 * private copy (issue 10, item 11). One wording for the app's header and Library and the CLI's `info`.
 */
export const SNAPSHOT_NOTE = 'read-only snapshot: the folder is not writable, changes the agent makes now are not seen; reopen to refresh'
