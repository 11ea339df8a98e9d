/**
 * Handlers for opening DBs and browsing them: app, store, sessions, memories, events.
 */
import { RecallscopeError } from '../../../shared/result'
import type { MemoryDetail, SimilarResult } from '../../../shared/contract'
import type { App } from '../app'
import type { Handlers } from '../register'
import { normalizeQuery, rankAll } from '../../recall/dense'
import { pickAccess, pickDialog } from '../../safety/pathGrants'
import { eventLogOf } from '../../events/eventLog'

type BrowseChannels =
  | 'app.info'
  | 'store.open'
  | 'store.openDemo'
  | 'store.facts'
  | 'store.recent'
  | 'store.close'
  | 'store.pick'
  | 'sessions.page'
  | 'sessions.get'
  | 'memories.page'
  | 'memories.get'
  | 'memories.similar'
  | 'memories.facets'
  | 'events.page'
  | 'events.sources'

export function browseHandlers(app: App): Pick<Handlers, BrowseChannels> {
  return {
    'app.info': () => ({ version: app.version, mode: app.mode, current: app.openInfo(), demoPath: app.demoPath }),
    // Desktop app: only paths from the dialog, the command line or the recent list (safety/pathGrants).
    // Write mode in the desktop app: only after the user's yes in main's own message box (safety/writeConsent);
    // a no opens read-only and says so (`writeDeclined`), so the Library can tell which mode it ended in.
    'store.open': async (i) => {
      const p = app.confine(i.path, 'store.open', 'read')
      const workspacePath = i.workspacePath === undefined ? undefined : app.confine(i.workspacePath, 'store.open workspacePath', 'write')
      const write = i.write && (await app.allowWrite(p))
      const info = await app.openStore(p, { workspacePath, write })
      return i.write && !write ? { ...info, writeDeclined: true as const } : info
    },
    'store.openDemo': (i) => app.openDemo(i.regenerate),
    'store.facts': () => app.requireStore().facts(),
    'store.recent': () => app.recent(),
    'store.close': () => ({ closed: app.close() }),
    'store.pick': async (i) => {
      if (!app.pickFile) return { supported: false, path: null }
      const picked = await app.pickFile(pickDialog(i.purpose, i.defaultPath))
      // Main keeps what the user chose, for what the dialog was for (open: read, save: write).
      app.grants.grant(picked, 'file dialog', pickAccess(i.purpose))
      return { supported: true, path: picked }
    },
    'sessions.page': (i) => app.requireStore().sessionsPage(i),
    'sessions.get': (i) => {
      const s = app.requireStore().getSession(i.id)
      if (!s) throw new RecallscopeError('NOT_FOUND', `No session ${i.id}`)
      return s
    },
    'memories.page': (i) => app.requireStore().memoriesPage(i),
    'memories.get': async (i): Promise<MemoryDetail> => {
      const store = app.requireStore()
      const memory = store.getMemory(i.id)
      if (!memory) throw new RecallscopeError('NOT_FOUND', `No memory ${i.id}`)
      const raw = store.rawMetadata(i.id)
      return {
        memory,
        session: memory.sessionId ? store.getSession(memory.sessionId) : null,
        vectors: store.vectorInfo(i.id),
        appearances: await eventLogOf(store).eventsForMemory(i.id),
        rawMetadata: raw == null ? null : typeof raw === 'string' ? raw : Buffer.isBuffer(raw) ? raw.toString('utf8') : JSON.stringify(raw),
      }
    },
    'memories.similar': async (i): Promise<SimilarResult> => {
      const t0 = performance.now()
      const store = await app.readyStore()
      const self = store.getMemory(i.id)
      if (!self) throw new RecallscopeError('NOT_FOUND', `No memory ${i.id}`)
      const model = i.model ?? store.storedModels('memory').find((m) => store.vectors(m).get(i.id))
      if (!model) return { model: null, results: [], tookMs: performance.now() - t0 }
      const idx = store.vectors(model)
      const v = idx.get(i.id)
      const q = v && normalizeQuery(v)
      if (!q) throw new RecallscopeError('NOT_FOUND', `Memory ${i.id} has no usable ${model} vector`)
      // Take a generous top slice (the dense arm's exact ranking, in memory or compact), then drop
      // the memory itself and apply the agent filter on the fetched rows.
      const selfRow = idx.rowOf.get(i.id)
      const top = rankAll(idx, q)((i.sameAgent ? i.k * 20 : i.k) + 1)
      const order = top.rows.map((r, j) => ({ r, s: top.sims[j] })).filter((x) => x.r !== selfRow)
      const mems = store.getMemories(order.map((x) => idx.ids[x.r]))
      const results = order
        .map(({ r, s }) => ({ memory: mems.get(idx.ids[r])!, similarity: s }))
        .filter((x) => x.memory && (!i.sameAgent || x.memory.agentId === self.agentId))
        .slice(0, i.k)
      return { model, results, tookMs: performance.now() - t0 }
    },
    'memories.facets': () => app.requireStore().facets(),
    'events.page': (i) => eventLogOf(app.requireStore()).eventsPage(i),
    'events.sources': async () => {
      const log = eventLogOf(app.requireStore())
      await log.load()
      return log.sources()
    },
  }
}
