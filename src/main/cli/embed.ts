import { RecallscopeError } from '../../shared/result'
import { backfillEmbeddings, type BackfillReport } from '../embed/backfill'
import { createEmbedder, embedderUsage, parseEmbedderSpec } from '../embed/index'
import { openStore } from '../store/registry'

import { optionalInt, readMapping, requireString, type Command } from './args'

const USAGE = [
  'recallscope embed --db FILE|URL [--map MAPPING.json] --embedder SPEC [--batch N] [--agent ID] [--user ID] [--session ID] [--tenant ID]',
  '         [--ollama-host URL] [--openai-base-url URL] [--timeout MS] [--workspace FILE] [--json]',
].join('\n')

const n = (x: number) => x.toLocaleString('en-US')

function formatBackfill(r: BackfillReport): string {
  return [
    `Backfilled ${n(r.embedded)} ${r.model} vectors${r.dim ? ` (${r.dim}-d)` : ''} with ${r.embedder} in ${(r.tookMs / 1000).toFixed(1)} s → the workspace DB`,
    `  in scope ${n(r.inScope)} · already embedded ${n(r.alreadyEmbedded)} · empty content ${n(r.skippedEmpty)}${r.rejected ? ` · rejected (empty/NaN vectors) ${n(r.rejected)}` : ''} · ${n(r.batches)} embedding calls`,
  ].join('\n')
}

export const embedCommand: Command = {
  name: 'embed',
  summary: 'Backfill missing embeddings with an embedder, into the workspace DB (the agent DB is never written)',
  usage: `${USAGE}\n\n  SPEC: ${embedderUsage()}\n  Memories with no usable vector of the embedder's model (none, or malformed) get one; Ctrl-C stops\n  after the current batch and keeps what was written (a rerun continues).`,
  options: {
    db: { type: 'string' },
    map: { type: 'string' },
    embedder: { type: 'string' },
    batch: { type: 'string' },
    agent: { type: 'string' },
    user: { type: 'string' },
    session: { type: 'string' },
    tenant: { type: 'string' },
    'ollama-host': { type: 'string' },
    'openai-base-url': { type: 'string' },
    timeout: { type: 'string' },
    workspace: { type: 'string' },
  },
  async run(ctx) {
    const v = ctx.values
    const db = requireString(ctx, 'db', USAGE)
    const spec = parseEmbedderSpec(requireString(ctx, 'embedder', USAGE))
    const batchSize = optionalInt(ctx, 'batch', 1) ?? 32
    if (batchSize > 1024) throw new RecallscopeError('BAD_INPUT', `--batch must be at most 1024 (got ${batchSize})`)
    const timeoutMs = optionalInt(ctx, 'timeout', 50) ?? 30_000
    const str = (k: string) => (typeof v[k] === 'string' ? v[k] : undefined)
    const embedder = createEmbedder(spec.spec, { ollamaHost: str('ollama-host'), openaiBaseUrl: str('openai-base-url'), timeoutMs })
    const store = openStore({ path: db, workspacePath: str('workspace'), mapping: readMapping(ctx) })
    const ac = new AbortController()
    const onSigint = () => ac.abort()
    process.once('SIGINT', onSigint)
    let lastStep = -1
    try {
      const report = await backfillEmbeddings(store, embedder, {
        filter: { agentId: str('agent'), userId: str('user'), sessionId: str('session'), tenantId: str('tenant') },
        batchSize,
        spec: spec.spec,
        signal: ac.signal,
        onProgress: (done, total, message) => {
          if (ctx.json || total <= 0) return
          // One line per 10 % (no carriage returns: the output stays readable in logs).
          const step = Math.floor((10 * done) / total)
          if (step === lastStep) return
          lastStep = step
          ctx.io.err(`  ${String(step * 10).padStart(3)}%  ${n(done)}/${n(total)} memories · ${message ?? ''}`)
        },
      })
      ctx.io.out(ctx.json ? JSON.stringify({ ok: true, ...report }) : formatBackfill(report))
      return 0
    } finally {
      process.removeListener('SIGINT', onSigint)
      store.close()
    }
  },
}
