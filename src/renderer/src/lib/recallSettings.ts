/**
 * The current recall settings (preset, full config, query, moment, embedder):
 * the one source of truth that the other screens start from — Compare's "My
 * current Recall settings", the Map's default request, and the Recall screen
 * itself when its nav item reopens it. Written by the Recall screen on every
 * change; kept in this tab's sessionStorage so a reload keeps it, and forgotten
 * when another database is opened (its scope and preset belong to the DB).
 */
import type { RecallConfig } from '../../../shared/types'
import { createQuietTimer } from './quietTimer'

export interface RecallSettings {
  preset: string
  config: RecallConfig
  query: string
  /** the moment the recall runs at (ms), when known */
  now?: number | null
  /** the embedder the request names, when it names one */
  embedder?: string | null
}

const KEY = 'recallscope.recallSettings'

let current: RecallSettings | null = readStored()

function readStored(): RecallSettings | null {
  try {
    const v = JSON.parse(sessionStorage.getItem(KEY) ?? 'null') as RecallSettings | null
    return v && typeof v === 'object' && typeof v.preset === 'string' && v.config && typeof v.query === 'string' ? v : null
  } catch {
    return null
  }
}

/**
 * Stored this long after the last change: a slider drag changes the config every frame, and encoding and
 * storing it each time cost more than the drag step's re-rank (docs/internals/performance.md, "Recall sliders").
 */
const STORE_MS = 250
const storeTimer = createQuietTimer(STORE_MS)
let stored: string | null = null
// A reload or close within the wait still keeps the latest.
if (typeof window !== 'undefined') window.addEventListener('pagehide', () => storeCurrent())

/** Called by the Recall screen whenever its request or config changes: current at once, stored once the changes rest. */
export function rememberRecallSettings(s: RecallSettings): void {
  current = s
  storeTimer.poke(storeCurrent)
}

function storeCurrent(): void {
  if (!current) return
  const json = JSON.stringify(current)
  if (json === stored) return
  stored = json
  try {
    sessionStorage.setItem(KEY, json)
  } catch {
    /* storage full or off: the settings last for this page */
  }
}

/** Another DB was opened: its screens start from their defaults. */
export function forgetRecallSettings(): void {
  current = null
  stored = null
  storeTimer.cancel()
  try {
    sessionStorage.removeItem(KEY)
  } catch {
    /* nothing stored */
  }
}

/** The current recall settings in this tab, or null when the Recall screen was not opened yet. */
export function currentRecallSettings(): RecallSettings | null {
  return current
}
