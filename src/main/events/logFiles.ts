/**
 * A log path the user gave (`--log PATH`, "Add a trace log…") → the files to read and
 * their formats. A file must be of a known format (LOG_FORMATS); a folder means every
 * file below it (sub-folders too, e.g. `~/.claude/projects`) that is of one, others
 * passed over. Typed errors: NOT_FOUND for a missing path, BAD_INPUT for a file (or a
 * folder holding none) of no known format.
 */
import fs from 'node:fs'
import path from 'node:path'
import { RecallscopeError } from '../../shared/result'
import { LOG_FORMATS } from './logFormats'
import { readHead } from './lineReader'
import { emptyStats, type EventReader, type LogFormat, type ReadStats } from './types'

/** Files taken from one folder at most (a home folder given by mistake must not stall the app). */
export const MAX_FOLDER_FILES = 5000
/** Folder depth walked. */
const MAX_DEPTH = 6

export interface LogFile {
  file: string
  format: LogFormat
}

/** The format of one file, or null. */
export function sniffLogFile(file: string): LogFormat | null {
  const head = readHead(file)
  if (head === '') return null
  return LOG_FORMATS.find((f) => f.sniff(file, head)) ?? null
}

const known = () => LOG_FORMATS.map((f) => f.label).join(', ')

/** The log files a path names (sorted by path), with the folder's over-limit count. */
export function resolveLogPath(p: string): { files: LogFile[]; truncated: boolean } {
  const abs = path.resolve(p)
  let st: fs.Stats
  try {
    st = fs.statSync(abs)
  } catch {
    throw new RecallscopeError('NOT_FOUND', `No such log file or folder: ${abs}`)
  }
  if (st.isFile()) {
    const format = sniffLogFile(abs)
    if (!format) throw new RecallscopeError('BAD_INPUT', `${abs} is not a trace log recallscope reads (${known()})`)
    return { files: [{ file: abs, format }], truncated: false }
  }
  if (!st.isDirectory()) throw new RecallscopeError('BAD_INPUT', `${abs} is neither a file nor a folder`)
  const files: LogFile[] = []
  let truncated = false
  const walk = (dir: string, depth: number) => {
    let entries: fs.Dirent[]
    try {
      entries = fs.readdirSync(dir, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))
    } catch {
      return // an unreadable sub-folder is passed over
    }
    for (const e of entries) {
      if (files.length >= MAX_FOLDER_FILES) {
        truncated = true
        return
      }
      const full = path.join(dir, e.name)
      if (e.isDirectory() && depth < MAX_DEPTH && !e.name.startsWith('.')) walk(full, depth + 1)
      else if (e.isFile() && /\.jsonl?$/i.test(e.name)) {
        const format = sniffLogFile(full)
        if (format) files.push({ file: full, format })
      }
    }
  }
  walk(abs, 0)
  if (files.length === 0) throw new RecallscopeError('BAD_INPUT', `${abs} holds no trace log recallscope reads (${known()})`)
  return { files, truncated }
}

/** The readers of a log path, one per file. */
export function logReaders(p: string): EventReader[] {
  return resolveLogPath(p).files.map((f) => f.format.reader(f.file))
}

/** Read every recall of a log path (tests, the CLI's quick summary). */
export async function readLogPath(p: string, stats: ReadStats = emptyStats()) {
  const out = []
  for (const r of logReaders(p)) for await (const e of r.read(stats)) out.push(e)
  return { recalls: out, stats }
}
