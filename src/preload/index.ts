/**
 * The preload: the renderer's only door to main. One explicitly written,
 * typed function per contract channel (no generic pass-through to
 * ipcRenderer, so a compromised renderer cannot reach any other channel) and
 * one subscription for job progress. Types only from src/shared: nothing else
 * is bundled, because a sandboxed preload can require only 'electron'.
 *
 * Adding a channel to src/shared/contract/? Add its one-liner here too: the
 * `satisfies` below makes a missing one a type error, and test/shell checks the
 * keys against the contract at run time.
 */
import { contextBridge, ipcRenderer, type IpcRendererEvent } from 'electron'
import type { JobProgress, RecallscopeApi } from '../shared/api'
// The one runtime import from src/shared: a string constant, no dependencies.
import { JOB_PROGRESS_CHANNEL as JOB_PROGRESS } from '../shared/jobs'

const api = {
  // --- app -----------------------------------------------------------------
  'app.info': (input) => ipcRenderer.invoke('app.info', input),

  // --- store ---------------------------------------------------------------
  'store.open': (input) => ipcRenderer.invoke('store.open', input),
  'store.openDemo': (input) => ipcRenderer.invoke('store.openDemo', input),
  'store.facts': (input) => ipcRenderer.invoke('store.facts', input),
  'store.recent': (input) => ipcRenderer.invoke('store.recent', input),
  'store.close': (input) => ipcRenderer.invoke('store.close', input),
  'store.pick': (input) => ipcRenderer.invoke('store.pick', input),
  'store.tables': (input) => ipcRenderer.invoke('store.tables', input),
  'store.suggestMapping': (input) => ipcRenderer.invoke('store.suggestMapping', input),
  'store.previewMapping': (input) => ipcRenderer.invoke('store.previewMapping', input),
  'store.openMapped': (input) => ipcRenderer.invoke('store.openMapped', input),

  // --- postgres ------------------------------------------------------------
  'pg.test': (input) => ipcRenderer.invoke('pg.test', input),
  'pg.connect': (input) => ipcRenderer.invoke('pg.connect', input),
  'pg.saved': (input) => ipcRenderer.invoke('pg.saved', input),
  'pg.forget': (input) => ipcRenderer.invoke('pg.forget', input),

  // --- sessions ------------------------------------------------------------
  'sessions.page': (input) => ipcRenderer.invoke('sessions.page', input),
  'sessions.get': (input) => ipcRenderer.invoke('sessions.get', input),

  // --- memories ------------------------------------------------------------
  'memories.page': (input) => ipcRenderer.invoke('memories.page', input),
  'memories.get': (input) => ipcRenderer.invoke('memories.get', input),
  'memories.similar': (input) => ipcRenderer.invoke('memories.similar', input),
  'memories.facets': (input) => ipcRenderer.invoke('memories.facets', input),

  // --- events --------------------------------------------------------------
  'events.page': (input) => ipcRenderer.invoke('events.page', input),
  'events.sources': (input) => ipcRenderer.invoke('events.sources', input),

  // --- embed ---------------------------------------------------------------
  'embed.status': (input) => ipcRenderer.invoke('embed.status', input),
  'embed.models': (input) => ipcRenderer.invoke('embed.models', input),
  'embed.backfill': (input) => ipcRenderer.invoke('embed.backfill', input),

  // --- settings ------------------------------------------------------------
  'settings.get': (input) => ipcRenderer.invoke('settings.get', input),
  'settings.set': (input) => ipcRenderer.invoke('settings.set', input),

  // --- recall --------------------------------------------------------------
  'recall.run': (input) => ipcRenderer.invoke('recall.run', input),
  'recall.presets': (input) => ipcRenderer.invoke('recall.presets', input),
  'recall.compare': (input) => ipcRenderer.invoke('recall.compare', input),
  'recall.ages': (input) => ipcRenderer.invoke('recall.ages', input),
  'recall.scopeCount': (input) => ipcRenderer.invoke('recall.scopeCount', input),
  'configs.save': (input) => ipcRenderer.invoke('configs.save', input),
  'configs.list': (input) => ipcRenderer.invoke('configs.list', input),
  'configs.get': (input) => ipcRenderer.invoke('configs.get', input),
  'configs.delete': (input) => ipcRenderer.invoke('configs.delete', input),
  'configs.diff': (input) => ipcRenderer.invoke('configs.diff', input),
  'recall.refresh': (input) => ipcRenderer.invoke('recall.refresh', input),

  // --- map -----------------------------------------------------------------
  'map.build': (input) => ipcRenderer.invoke('map.build', input),
  'map.refine': (input) => ipcRenderer.invoke('map.refine', input),

  // --- trace ---------------------------------------------------------------
  'trace.event': (input) => ipcRenderer.invoke('trace.event', input),
  'trace.replay': (input) => ipcRenderer.invoke('trace.replay', input),
  'trace.why': (input) => ipcRenderer.invoke('trace.why', input),
  'trace.drivers': (input) => ipcRenderer.invoke('trace.drivers', input),
  'trace.counterfactual': (input) => ipcRenderer.invoke('trace.counterfactual', input),
  'trace.timeline': (input) => ipcRenderer.invoke('trace.timeline', input),
  'trace.logs': (input) => ipcRenderer.invoke('trace.logs', input),
  'trace.addLog': (input) => ipcRenderer.invoke('trace.addLog', input),
  'trace.ingestOtlp': (input) => ipcRenderer.invoke('trace.ingestOtlp', input),
  'trace.removeLog': (input) => ipcRenderer.invoke('trace.removeLog', input),

  // --- eval ----------------------------------------------------------------
  'cases.list': (input) => ipcRenderer.invoke('cases.list', input),
  'cases.get': (input) => ipcRenderer.invoke('cases.get', input),
  'cases.save': (input) => ipcRenderer.invoke('cases.save', input),
  'cases.delete': (input) => ipcRenderer.invoke('cases.delete', input),
  'cases.import': (input) => ipcRenderer.invoke('cases.import', input),
  'cases.export': (input) => ipcRenderer.invoke('cases.export', input),
  'eval.run': (input) => ipcRenderer.invoke('eval.run', input),
  'eval.tune': (input) => ipcRenderer.invoke('eval.tune', input),
  'runs.list': (input) => ipcRenderer.invoke('runs.list', input),
  'runs.get': (input) => ipcRenderer.invoke('runs.get', input),
  'runs.compare': (input) => ipcRenderer.invoke('runs.compare', input),
  'runs.rename': (input) => ipcRenderer.invoke('runs.rename', input),
  'runs.delete': (input) => ipcRenderer.invoke('runs.delete', input),
  'tune.list': (input) => ipcRenderer.invoke('tune.list', input),
  'tune.get': (input) => ipcRenderer.invoke('tune.get', input),
  'tune.delete': (input) => ipcRenderer.invoke('tune.delete', input),
  'eval.scope': (input) => ipcRenderer.invoke('eval.scope', input),

  // --- import --------------------------------------------------------------
  'import.start': (input) => ipcRenderer.invoke('import.start', input),

  // --- jobs ----------------------------------------------------------------
  'jobs.list': (input) => ipcRenderer.invoke('jobs.list', input),
  'jobs.get': (input) => ipcRenderer.invoke('jobs.get', input),
  'jobs.cancel': (input) => ipcRenderer.invoke('jobs.cancel', input),

  // --- job progress (push) -------------------------------------------------
  onJobProgress(listener) {
    // The IPC event object stays here: the renderer gets the payload only.
    const handler = (_event: IpcRendererEvent, p: JobProgress) => listener(p)
    ipcRenderer.on(JOB_PROGRESS, handler)
    return () => {
      ipcRenderer.removeListener(JOB_PROGRESS, handler)
    }
  },
} satisfies RecallscopeApi

contextBridge.exposeInMainWorld('recallscope', api)
