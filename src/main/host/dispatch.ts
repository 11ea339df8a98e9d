/**
 * The dispatcher of the desktop app and of `serve`: the same contract, validation and
 * Result wrapping as every dispatcher (api/register.ts), with each channel run where it
 * belongs. The few channels in MAIN_CHANNELS run on the main thread (they touch no store:
 * the window's state, settings, grants, dialogs, the jobs list, or they start a store
 * host); every other channel, including any new one, is forwarded with its validated
 * input to the open store's host worker (hostedApp.ts), where the same handler runs.
 */
import type { Channel } from '../../shared/contract'
import { createHandlers } from '../api/handlers'
import { CHANNELS, createDispatcher, type Dispatch, type Handler, type Handlers } from '../api/register'
import type { HostedApp } from './hostedApp'

/** Channels that run on main. Everything else runs in a store host. */
export const MAIN_CHANNELS: ReadonlySet<Channel> = new Set<Channel>([
  'app.info', // answers from main's cached OpenInfo, so it answers while a store is busy
  'store.recent',
  'store.pick',
  'store.close',
  'settings.get',
  'settings.set',
  'embed.models', // asks the embedding server only
  'recall.presets',
  'pg.saved',
  'pg.forget',
  'jobs.list',
  'jobs.get',
  'jobs.cancel',
  'import.start', // its job runs in the storeless job worker
  // These check paths, consent and saved passwords here, then open or read in a store host (HostedApp).
  'store.open',
  'store.openDemo',
  'store.openMapped',
  'pg.connect',
  'pg.test',
  'store.tables',
  'store.suggestMapping',
  'store.previewMapping',
])

export function createHostedDispatcher(app: HostedApp, opts: Parameters<typeof createDispatcher>[1] = {}): Dispatch {
  const local = createHandlers(app)
  const handlers: Record<string, Handler<Channel>> = {}
  for (const c of CHANNELS) handlers[c] = MAIN_CHANNELS.has(c) ? local[c] : (input) => app.forward(c, input) as never
  return createDispatcher(handlers as Handlers, opts)
}
