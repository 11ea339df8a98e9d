/**
 * The Recall screen's current settings (preset, full config, query), kept for
 * this window so other screens can start from them: Compare's "my current
 * Recall settings". Module state, like the job store: it outlives the view.
 */
import type { RecallConfig } from '../../../shared/types'

export interface RecallSettings {
  preset: string
  config: RecallConfig
  query: string
}

let current: RecallSettings | null = null

/** Called by the Recall screen whenever its request or config changes. */
export function rememberRecallSettings(s: RecallSettings): void {
  current = s
}

/** The Recall screen's last settings in this window, or null when it was not opened yet. */
export function currentRecallSettings(): RecallSettings | null {
  return current
}
