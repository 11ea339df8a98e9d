/**
 * What the Evaluate view runs: a preset, a partial config over it (JSON the user
 * edits, or a tuned config applied from the Tune tab), k and the split. Shared
 * by every tab so "Run", "Compare" and "Tune" talk about the same config.
 */
import type { PartialRecallConfig } from '../../../../shared/config'

export interface EvalSettings {
  preset: string
  /** JSON text of a partial RecallConfig merged over the preset ('' = none) */
  overrides: string
  k: number
  split: 'all' | 'train' | 'test'
}

export const DEFAULT_SETTINGS: EvalSettings = { preset: 'fieldguide', overrides: '', k: 10, split: 'all' }

/** The overrides as an object, or the parse error to show. */
export function parseOverrides(text: string): { ok: true; config: PartialRecallConfig | undefined } | { ok: false; error: string } {
  if (text.trim() === '') return { ok: true, config: undefined }
  try {
    const v = JSON.parse(text) as unknown
    if (!v || typeof v !== 'object' || Array.isArray(v)) return { ok: false, error: 'the config must be a JSON object' }
    return { ok: true, config: v }
  } catch (e) {
    return { ok: false, error: `not valid JSON: ${(e as Error).message}` }
  }
}
