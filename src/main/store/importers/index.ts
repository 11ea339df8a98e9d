/**
 * Importers: foreign memory formats → canonical DBs (docs/internals/design.md "Interfaces":
 * `recallscope import engram|jsonl|locomo --in PATH --out FILE`).
 *
 * The built-ins are registered in IMPORTERS, the same list a third party would
 * extend (Datasette's DEFAULT_PLUGINS): an importer is `{ name, summary,
 * defaultEmbed, usesModel, run(opts) → ImportReport }`.
 */
import { RecallscopeError } from '../../../shared/result'
import type { Importer } from './common'
import { engramImporter } from '../engram/importer'
import { jsonlImporter } from './jsonl'
import { locomoImporter } from './locomo'
import { frameworkImporter } from '../frameworks/importer'

export type { ImportReport, Importer } from './common'

/** Built-in importers, in CLI help order. */
export const IMPORTERS: Importer[] = [engramImporter, jsonlImporter, locomoImporter, frameworkImporter]

/** The importer of a name, or a BAD_INPUT error listing the known ones. */
export function findImporter(name: string): Importer {
  const imp = IMPORTERS.find((i) => i.name === name)
  if (!imp) throw new RecallscopeError('BAD_INPUT', `Unknown import format '${name}' (known: ${IMPORTERS.map((i) => i.name).join(', ')})`)
  return imp
}
