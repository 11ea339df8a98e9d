import { RecallscopeError } from '../../shared/result'
import { findImporter, IMPORTERS, type ImportReport } from '../store/importers'
import { requireString, type Command } from './args'

const USAGE = `recallscope import ${IMPORTERS.map((i) => i.name).join('|')} --in PATH --out FILE [--force] [--model NAME] [--embed hashing|none] [--json]`

const HELP = [
  USAGE,
  '',
  ...IMPORTERS.map((i) => `  ${i.name.padEnd(7)} ${i.summary} (default --embed ${i.defaultEmbed})`),
  '',
  '  --model NAME        model name for stored vectors that do not name one (default nomic-embed-text)',
  '  --embed hashing     also write offline hashing-256 vectors (memories and session summaries)',
  '  --force             overwrite FILE (and drop its old workspace)',
  'Malformed rows are skipped or repaired and reported, never fatal. LoCoMo QA items become eval cases in FILE.recallscope.',
].join('\n')

const n = (x: number) => x.toLocaleString('en-US')

/** Human summary: counts, then every skip/repair reason with its total and a first example. */
function formatImportReport(r: ImportReport): string {
  const lines = [
    `Imported ${r.input} → ${r.output}${r.layout ? ` (${r.layout})` : ''} in ${(r.tookMs / 1000).toFixed(1)} s`,
    `  memories ${n(r.written.memories)} · sessions ${n(r.written.sessions)} · embeddings ${n(r.written.embeddings)}${
      r.models.length ? ` (${r.models.map((m) => `${m.model} ${m.ownerType} ×${n(m.count)}, dim ${m.dim}`).join('; ')})` : ''
    }${r.workspace ? ` · eval cases ${n(r.written.evalCases)} → ${r.workspace}` : ''}`,
  ]
  if (r.reasons.length === 0) lines.push('  nothing skipped or repaired')
  else {
    lines.push(`  skipped ${n(r.skipped)} · repaired ${n(r.repaired)}:`)
    const w = Math.max(...r.reasons.map((x) => String(x.count).length))
    for (const g of r.reasons) {
      const ex = r.issues.find((i) => i.action === g.action && i.reason === g.reason)
      const where = ex ? exampleOf(ex) : ''
      lines.push(`    ${g.action.padEnd(8)} ${String(g.count).padStart(w)}× ${g.reason}${where ? `  (e.g. ${where})` : ''}`)
    }
    if (r.issuesTruncated) lines.push(`    (first ${r.issues.length} listed with --json)`)
  }
  for (const note of r.notes) lines.push(`  note: ${note}`)
  return lines.join('\n')
}

function exampleOf(i: ImportReport['issues'][number]): string {
  const parts: string[] = []
  if (i.line !== undefined) parts.push(`line ${i.line}`)
  if (i.table) parts.push(i.table)
  if (i.qa) parts.push(i.qa)
  else if (i.id) parts.push(i.id)
  if (i.session) parts.push(i.session)
  if (i.evidence !== undefined) parts.push(JSON.stringify(i.evidence))
  if (i.detail) parts.push(i.detail.length > 60 ? `${i.detail.slice(0, 57)}...` : i.detail)
  return parts.join(' ')
}

export const importCommand: Command = {
  name: 'import',
  summary: "Import Engram, JSONL, LoCoMo or an agent framework's store into a canonical memory DB (LoCoMo QA → eval cases)",
  usage: HELP,
  positionals: true,
  options: { in: { type: 'string' }, out: { type: 'string' }, force: { type: 'boolean' }, model: { type: 'string' }, embed: { type: 'string' } },
  async run(ctx) {
    const [format, ...extra] = ctx.positionals
    if (!format) throw new RecallscopeError('BAD_INPUT', `Which format? Usage: ${USAGE}`)
    if (extra.length) throw new RecallscopeError('BAD_INPUT', `Unexpected argument '${extra[0]}'. Usage: ${USAGE}`)
    const imp = findImporter(format)
    const input = requireString(ctx, 'in', USAGE)
    const output = requireString(ctx, 'out', USAGE)
    const embed = ctx.values.embed
    if (embed !== undefined && embed !== 'hashing' && embed !== 'none')
      throw new RecallscopeError('BAD_INPUT', `--embed must be hashing or none (got ${String(embed)})`)
    const model = ctx.values.model
    if (model !== undefined && !imp.usesModel)
      throw new RecallscopeError('BAD_INPUT', `--model does not apply to ${imp.name} imports (they carry no stored vectors)`)
    if (model !== undefined && (typeof model !== 'string' || model.trim() === '')) throw new RecallscopeError('BAD_INPUT', '--model needs a name')
    let lastPct = -1
    const report = await imp.run({
      input,
      output,
      force: Boolean(ctx.values.force),
      embed: embed,
      model: model,
      onProgress: (done, total) => {
        if (ctx.json || total <= 0) return
        const pct = Math.floor((100 * done) / total)
        if (pct !== lastPct && pct % 25 === 0 && pct < 100) {
          lastPct = pct
          ctx.io.err(`  ${pct}%`)
        }
      },
    })
    if (ctx.json) ctx.io.out(JSON.stringify({ ok: true, ...report }))
    else ctx.io.out(formatImportReport(report))
    return 0
  },
}
