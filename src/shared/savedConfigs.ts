/**
 * Named recall configs kept in the workspace ("Save config…" on the Recall screen,
 * `configs.*` channels): the shapes that cross the boundary and the field-by-field
 * diff of two configs. docs/guide/recall.md "Named configs and the pinned baseline".
 */
import type { RecallConfig } from './types'

/** A config saved under a name in the workspace. */
export interface SavedConfig {
  /** unique in the workspace (case-sensitive, trimmed) */
  name: string
  /** the preset it was built over (what "Load" selects), or null */
  preset: string | null
  /** the whole config, every field set */
  config: RecallConfig
  /** free text */
  note: string
  createdAt: number
  updatedAt: number
}

/** One field that differs between two configs (dotted path, e.g. `weights.recency`). */
export interface ConfigChange {
  path: string
  /** the value in `a` (null = unset) */
  a: unknown
  b: unknown
}

/** `configs.diff`: what changes from `a` to `b`, field by field (empty = same config). */
export interface ConfigDiff {
  a: string
  b: string
  changes: ConfigChange[]
}

function isPlain(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v)
}

/**
 * Every leaf that differs between two configs, keys sorted at each level. Objects are
 * walked; arrays and scalars compare by value; an unset field counts as null.
 */
export function diffConfigs(a: RecallConfig, b: RecallConfig): ConfigChange[] {
  const out: ConfigChange[] = []
  const walk = (x: unknown, y: unknown, path: string): void => {
    if (isPlain(x) && isPlain(y)) {
      for (const k of [...new Set([...Object.keys(x), ...Object.keys(y)])].sort()) walk(x[k], y[k], path ? `${path}.${k}` : k)
      return
    }
    if (JSON.stringify(x ?? null) !== JSON.stringify(y ?? null)) out.push({ path, a: x ?? null, b: y ?? null })
  }
  walk(a, b, '')
  return out
}
