/**
 * Framework stores recallscope opens directly (issue 14): SQLite layouts as adapters
 * (registered in ADAPTERS), non-SQLite formats as materializers, and folders that hold a
 * SQLite file (basic-memory's `.basic-memory/`) resolved to that file.
 */
import { resolveBasicMemoryFolder } from './basicMemory/adapter'
import { crewaiLanceMaterializer } from './crewai/lance'
import { lettaCodeMaterializer } from './letta/code'
import type { Materialized, Materializer } from './materialize'

/** Non-SQLite formats, tried in order on a path that is a folder or not SQLite. */
export const MATERIALIZERS: Materializer[] = [crewaiLanceMaterializer, lettaCodeMaterializer]

/** The first materializer that recognises `p`, materialized; null when none does. */
export function materializeForeign(p: string, nativeBinding?: string): Materialized | null {
  for (const m of MATERIALIZERS) if (m.sniff(p)) return m.materialize(p, { nativeBinding })
  return null
}

/** Folders that hold a SQLite memory DB: the folder → the file (null when `p` is not such a folder). */
export const FOLDER_RESOLVERS: ((p: string) => string | null)[] = [resolveBasicMemoryFolder]

export function resolveFolderDb(p: string): string | null {
  for (const r of FOLDER_RESOLVERS) {
    const f = r(p)
    if (f) return f
  }
  return null
}
