/**
 * `import framework`: copy any framework store recallscope opens directly (CrewAI LanceDB or
 * legacy LTM, mcp-memory-service, basic-memory, Letta server, Letta Code, …) into a canonical DB
 * — issue 14's "an import into canonical stays available for each".
 *
 * It opens the input exactly as `Store.open` does (read-only; a folder or a file), with a
 * throwaway workspace in a temp folder so nothing is written beside the input, then copies
 * the adapter's own SQL views: memories, sessions and vectors (model names as the open store
 * shows them, `<source>:<dim>` labels included). What the canonical columns do not hold is
 * already in each memory's metadata; the layout and why it was detected go to the report.
 */
import { MEMORY_COLUMNS, SESSION_COLUMNS } from '../canonical'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { RecallscopeError } from '../../../shared/result'
import { hashEmbed, HASHING_MODEL } from '../../embed/hashing'
import { decodeVector, cellText } from '../decode'
import { openSource } from '../registry'
import type { SqliteSource } from '../sqlite/source'
import {
  checkCancel,
  makeTicker,
  pruneMinorityDims,
  ReportBuilder,
  withOutput,
  type ImportOptions,
  type ImportReport,
  type Importer,
} from '../importers/common'
import type { CanonicalMemoryRow, CanonicalSessionRow } from '../sqlite/canonicalWriter'

/** Copy one opened framework store into a canonical DB. */
async function importFramework(opts: ImportOptions): Promise<ImportReport> {
  const t0 = performance.now()
  if (typeof opts.input !== 'string' || opts.input.trim() === '') throw new RecallscopeError('BAD_INPUT', 'An input file or folder is required (--in)')
  if (typeof opts.output !== 'string' || opts.output.trim() === '') throw new RecallscopeError('BAD_INPUT', 'An output file is required (--out)')
  const input = path.resolve(opts.input)
  const output = path.resolve(opts.output)
  if (!fs.existsSync(input)) throw new RecallscopeError('NOT_FOUND', `No such file or folder: ${input}`)
  if (input === output || output.startsWith(`${input}${path.sep}`))
    throw new RecallscopeError('BAD_INPUT', 'The output must not be the input or inside it (imports never modify their input)')
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'recallscope-import-'))
  let store: SqliteSource | null = null
  try {
    store = openSource({ path: input, workspacePath: path.join(tmp, 'ws.recallscope'), vectorCache: false })
    const s = store
    const src = s.sql
    const rb = new ReportBuilder(opts.maxIssues)
    if (src.detectedBecause) rb.notes.push(`detected: ${src.detectedBecause}`)
    const total = s.db.prepare(`SELECT count(*) FROM (${src.memoriesLite})`).pluck().get() as number
    const tick = makeTicker(opts, total)
    const { result, workspace } = await withOutput(
      output,
      opts,
      false,
      async (w) => {
        const seen = new Set<string>()
        let memories = 0
        let done = 0
        for (const r of s.db.prepare(`SELECT ${MEMORY_COLUMNS.join(', ')} FROM (${src.memoriesLite}) ORDER BY _rid`).iterate() as Iterable<
          Record<string, unknown>
        >) {
          done++
          const id = r.id == null ? null : cellText(r.id)
          if (id === null) rb.skip('missing id')
          else if (seen.has(id)) rb.skip('duplicate id (first kept)', { id })
          else {
            seen.add(id)
            const content = r.content == null ? '' : cellText(r.content)
            w.memory({ ...(r as unknown as CanonicalMemoryRow), id, content })
            if (opts.embed === 'hashing') w.embedding('memory', id, HASHING_MODEL, hashEmbed(content))
            memories++
          }
          await tick(done, 'memories')
        }
        let sessions = 0
        for (const r of s.db.prepare(`SELECT ${SESSION_COLUMNS.join(', ')} FROM (${src.sessions})`).iterate() as Iterable<Record<string, unknown>>) {
          if (r.id == null) continue
          w.session({ ...(r as unknown as CanonicalSessionRow), id: cellText(r.id), is_archived: r.is_archived ? 1 : 0 })
          sessions++
        }
        if (src.embeddings) {
          let n = 0
          for (const e of s.db.prepare(`SELECT owner_type, owner_id, model, dim, vector FROM (${src.embeddings})`).iterate() as Iterable<
            Record<string, unknown>
          >) {
            if (++n % 5000 === 0) checkCancel(opts.signal)
            const ownerId = String(e.owner_id)
            if (e.owner_type === 'memory' && !seen.has(ownerId)) continue
            const model = (e.model as string | null) ?? src.defaultModel
            if (!model) {
              rb.skip('vector without a model name', { id: ownerId })
              continue
            }
            const v = decodeVector(e.vector, (e.dim as number | null) ?? null)
            if (typeof v === 'string') rb.skip(`vector skipped: ${v}`, { id: ownerId })
            else w.embedding(e.owner_type === 'session' ? 'session' : 'memory', ownerId, model, v)
          }
        }
        const models = pruneMinorityDims(w.db, rb, (_ot, id) => ({ id }))
        return { memories, sessions, embeddings: models.reduce((k, m) => k + m.count, 0), models }
      },
      () => `${input} holds no memories to import`,
    )
    return rb.build({
      importer: 'framework',
      input,
      output,
      workspace,
      layout: src.layout,
      written: { memories: result.memories, sessions: result.sessions, embeddings: result.embeddings, evalCases: 0 },
      models: result.models,
      tookMs: Math.round(performance.now() - t0),
    })
  } finally {
    store?.close()
    fs.rmSync(tmp, { recursive: true, force: true })
  }
}

export const frameworkImporter: Importer = {
  name: 'framework',
  summary:
    'Any framework store recallscope opens directly (CrewAI LanceDB/LTM, mcp-memory-service, basic-memory, Letta, Letta Code): memories, sessions, vectors → canonical',
  defaultEmbed: 'none',
  usesModel: false,
  run: importFramework,
}
