/**
 * Background jobs that write: embedding backfill (into the workspace) and import
 * (into a new canonical DB). Each returns the started job at once; progress goes
 * out through App.jobs (IPC 'jobs.progress' / GET /api/progress) and the result
 * is the job's `result` (`jobs.get`). `jobs.list/get/cancel` live in eval.ts.
 */
import type { BackfillReport, ImportReportInfo } from '../../../shared/contract'
import { RecallscopeError } from '../../../shared/result'
import type { App } from '../app'
import type { Handlers } from '../register'
import { createEmbedder, DEFAULT_EMBEDDER_SPEC, parseEmbedderSpec } from '../../embed/index'
import { findImporter } from '../../store/importers'
import { checkPaths } from '../../store/importers/common'
import { registerTempsOf } from '../../safety/tempFiles'

type JobChannels = 'embed.backfill' | 'import.start'

export function jobHandlers(app: App): Pick<Handlers, JobChannels> {
  return {
    'embed.backfill': (i) => {
      const store = app.requireStore()
      const s = app.settings()
      const spec = parseEmbedderSpec(i.embedder ?? s.embedder ?? DEFAULT_EMBEDDER_SPEC)
      const host = i.host
      const embedder = createEmbedder(spec.spec, {
        ollamaHost: spec.kind === 'ollama' && host ? host : s.ollamaHost,
        openaiBaseUrl: spec.kind === 'openai' && host ? host : s.openaiBaseUrl,
        timeoutMs: i.timeoutMs,
      }) // built here too, so a spec without a model is BAD_INPUT now, not a failed job
      if (!embedder.enabled || !embedder.model)
        throw new RecallscopeError('BAD_INPUT', `Embedder "${spec.spec}" makes no vectors: pick one with a model (e.g. ollama:nomic-embed-text)`)
      // One backfill per DB and model at a time: a second would embed the same memories twice.
      const label = `Embed ${store.path.split(/[\\/]/).pop()} with ${spec.spec}`
      const busy = app.jobs.list().find((j) => j.kind === 'embed.backfill' && j.state === 'running' && j.label === label)
      if (busy) throw new RecallscopeError('CONFLICT', `A backfill with ${spec.spec} is already running on this DB (${busy.jobId})`, { jobId: busy.jobId })
      // In the job worker: its own connection reads the agent DB and writes the vectors to the workspace.
      const embedderOptions = {
        ollamaHost: spec.kind === 'ollama' && host ? host : s.ollamaHost,
        openaiBaseUrl: spec.kind === 'openai' && host ? host : s.openaiBaseUrl,
        timeoutMs: i.timeoutMs,
      }
      return app.jobs.start('embed.backfill', label, ({ progress, signal }): Promise<BackfillReport> =>
        app.offThread('backfill', { spec: spec.spec, embedderOptions, filter: i.scope ?? {}, batchSize: i.batchSize }, { signal, progress }),
      )
    },

    'import.start': (i) => {
      const imp = findImporter(i.kind)
      if (i.model !== undefined && !imp.usesModel)
        throw new RecallscopeError('BAD_INPUT', `model does not apply to ${imp.name} imports (they carry no stored vectors)`)
      // Desktop app: input from the Open dialog, output from the Save dialog; browser mode: the typed fields (safety/pathGrants).
      app.confine(i.in, 'import.start in', 'read')
      app.confine(i.out, 'import.start out', 'write')
      checkPaths({ input: i.in, output: i.out, embed: i.embed, force: i.force }) // typed errors now (not a failed job): missing input, output aliasing the input or an open DB
      return app.jobs.start(
        'import',
        `Import ${i.kind} ${i.in.split(/[\\/]/).pop()} → ${i.out.split(/[\\/]/).pop()}`,
        async ({ progress, signal }): Promise<ImportReportInfo> => {
          // The job worker writes the temp files; main removes them if the app is stopped mid-import.
          const release = registerTempsOf(i.out)
          try {
            return await app.offThread(
              'import',
              { kind: i.kind, input: i.in, output: i.out, force: i.force, model: i.model, embed: i.embed },
              { signal, progress },
            )
          } finally {
            release()
          }
        },
      )
    },
  }
}
