/**
 * What the Evaluate view runs: a preset, a partial config over it (JSON the user
 * edits, or a tuned config applied from the Tune tab), k and the split. Shared
 * by every tab so "Run", "Compare" and "Tune" talk about the same config.
 */
import { type PartialRecallConfig } from '../../../../shared/config'

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

/**
 * The overrides text with `patch` merged in (objects merged key by key, lists
 * and values replaced): how the Tune screen's "Widen to …" edits the config
 * under test. Unparseable overrides are replaced by the patch alone.
 */
export function mergeOverrides(text: string, patch: PartialRecallConfig): string {
  const o = parseOverrides(text)
  const cur = (o.ok ? (o.config ?? {}) : {}) as Record<string, unknown>
  const out: Record<string, unknown> = { ...cur }
  for (const [k, v] of Object.entries(patch)) {
    const was = out[k]
    out[k] = v && typeof v === 'object' && !Array.isArray(v) && was && typeof was === 'object' && !Array.isArray(was) ? { ...was, ...v } : v
  }
  return JSON.stringify(out, null, 2)
}
