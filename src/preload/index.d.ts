/**
 * `window.recallscope`, exposed by the preload in the Electron app. Optional
 * because browser mode has no preload (src/renderer/src/lib/api.ts then uses
 * the loopback HTTP bridge); the modifier must match lib/api.ts's declaration.
 */
import type { RecallscopeApi } from '../shared/api'

declare global {
  interface Window {
    recallscope?: RecallscopeApi
  }
}

export {}
