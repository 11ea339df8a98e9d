import { openStore } from '../store/registry'
import { SNAPSHOT_NOTE } from '../../shared/snapshot'

import { readMapping, requireString, type Command } from './args'
import { eventLogOf } from '../events/eventLog'
import { addLogs, describeSource } from './trace'

export const infoCommand: Command = {
  name: 'info',
  summary: 'Facts about a memory DB: layout, counts per agent/user/kind/tier, models, malformed rows',
  usage: 'recallscope info --db FILE|URL [--log FILE|FOLDER]… [--map MAPPING.json] [--json]',
  options: { db: { type: 'string' }, map: { type: 'string' }, log: { type: 'string', multiple: true } },
  async run(ctx) {
    const store = openStore({ path: requireString(ctx, 'db', this.usage), mapping: readMapping(ctx) })
    try {
      const f = store.facts()
      addLogs(store, ctx.values.log)
      // Every event source read now, so the counts are real (a log file is read here, streaming).
      const log = eventLogOf(store)
      await log.load()
      const eventSources = log.sources()
      // A store opened by a column mapping (given, or saved by an earlier open): the mapping itself, to reuse or edit.
      const mapping = f.layout === 'mapped' ? store.workspace.getMapping() : null
      if (ctx.json) {
        ctx.io.out(JSON.stringify({ ...f, ...(store.snapshotPath ? { snapshot: store.snapshotPath } : {}), ...(mapping ? { mapping } : {}), eventSources }))
        return 0
      }
      const fmt = (xs: { key: string; count: number }[]) => xs.map((x) => `${x.key} ${x.count.toLocaleString('en-US')}`).join(', ')
      const bad = Object.entries(f.malformed).filter(([, n]) => n > 0)
      ctx.io.out(
        [
          `${f.path} (${f.layout}, ${f.readOnly ? 'read-only' : 'WRITE MODE'})`,
          ...(f.detectedBecause ? [`  detected: ${f.detectedBecause}`] : []),
          ...(mapping ? [`  mapping: ${JSON.stringify(mapping)}`] : []),
          `  memories ${f.counts.memories.toLocaleString('en-US')} · sessions ${f.counts.sessions} · embeddings ${f.counts.embeddings} · recall events ${f.counts.recallEvents}`,
          ...(eventSources.length
            ? eventSources.map((x) => `  event source: ${describeSource(x)}`)
            : ['  event sources: none (no recall_events table, no agent records recallscope reads; add one with --log)']),
          `  agents: ${fmt(f.byAgent)}`,
          `  users: ${fmt(f.byUser)}`,
          `  kinds: ${fmt(f.byKind)}`,
          `  tiers: ${fmt(f.byTier)}`,
          `  models: ${f.models.map((m) => `${m.model} (${m.ownerType}, dim ${m.dim}, ${m.count}${m.backfilled ? ` + ${m.backfilled} backfilled` : ''})`).join(', ') || 'none'}`,
          `  malformed rows skipped: ${bad.length ? bad.map(([k, n]) => `${k} ${n}`).join(', ') : 'none'}`,
          `  full-text index: ${f.hasFts} · workspace: ${f.workspacePath}`,
          ...(store.snapshotPath ? [`  note: ${SNAPSHOT_NOTE} (read from the copy ${store.snapshotPath})`] : []),
        ].join('\n'),
      )
      return 0
    } finally {
      store.close()
    }
  },
}
