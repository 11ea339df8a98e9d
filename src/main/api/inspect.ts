/**
 * Reading a DB other than the open one: the mapping dialog's table list, suggested
 * mapping and live preview, and the Connect form's test. The handlers resolve and
 * check the paths and URLs on main (grants, saved passwords); the reading runs where
 * `App.inspect` runs it: in this thread for an in-thread App, in a store host worker
 * on the server and in the desktop app (a Postgres server that never answers wedges
 * that worker, never the main thread). Ops are plain data: they cross a thread.
 */
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import type { PgTestInfo } from '../../shared/contract'
import type { Mapping } from '../../shared/mapping'
import { inspectTables, previewFile, suggestForFile, type FileOptions } from '../store/mapped/file'
import { inspectPgTables, previewPg, suggestForPg, type PgDialogOptions } from '../store/mapped/pgTables'
import { openStore } from '../store/registry'

/** Where a mapping op reads: a SQLite file, or a Postgres database by URL. */
export type InspectSource = { kind: 'file'; opts: FileOptions } | { kind: 'pg'; opts: PgDialogOptions }

export type InspectOp =
  | { kind: 'tables'; source: InspectSource }
  | { kind: 'suggest'; source: InspectSource; table: string }
  | { kind: 'preview'; source: InspectSource; mapping: Mapping }
  | { kind: 'pgTest'; url: string; nativeBinding?: string }

/** Run one op in this thread. */
export function runInspect(op: InspectOp): unknown {
  switch (op.kind) {
    case 'tables':
      return op.source.kind === 'pg' ? inspectPgTables(op.source.opts) : inspectTables(op.source.opts)
    case 'suggest':
      return op.source.kind === 'pg' ? suggestForPg(op.source.opts, op.table) : suggestForFile(op.source.opts, op.table)
    case 'preview':
      return op.source.kind === 'pg' ? previewPg(op.source.opts, op.mapping) : previewFile(op.source.opts, op.mapping)
    case 'pgTest':
      return testPg(op.url, op.nativeBinding)
  }
}

/** Connect, detect the layout and count, in a throwaway workspace: testing must leave nothing behind. */
function testPg(url: string, nativeBinding: string | undefined): PgTestInfo {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'recallscope-pgtest-'))
  try {
    const s = openStore({ path: url, workspacePath: path.join(dir, 'test.recallscope'), nativeBinding })
    try {
      const caps = s.capabilities()
      return {
        url: s.path,
        layout: s.layout,
        detectedBecause: s.detectedBecause,
        memories: s.counts().memories,
        denseInDatabase: caps.pushdown !== null,
        vectorModels: caps.vectorModels.length,
      }
    } finally {
      s.close()
    }
  } finally {
    fs.rmSync(dir, { recursive: true, force: true })
  }
}
