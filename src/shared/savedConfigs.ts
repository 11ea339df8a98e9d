/**
 * Named recall configs kept in the workspace ("Save config…" on the Recall screen,
 * `configs.*` channels): the shapes that cross the boundary and the field-by-field
 * diff of two configs. docs/guide/recall.md "Named configs".
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
  /** the value in `a` (undefined = unset) */
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
 * Every leaf that differs between two configs, in a stable order (the keys of `a`,
 * then keys only `b` has). Objects are walked; arrays and scalars compare by value.
 */
export function diffConfigs(a: RecallConfig, b: RecallConfig): ConfigChange[] {
  const out: ConfigChange[] = []
  const walk = (x: unknown, y: unknown, path: string): void => {
    if (isPlain(x) && isPlain(y)) {
      const keys = [...Object.keys(x), ...Object.keys(y).filter((k) => !(k in x))]
      for (const k of keys) walk(x[k], y[k], path ? `${path}.${k}` : k)
      return
    }
    if (JSON.stringify(x) !== JSON.stringify(y)) out.push({ path, a: x, b: y })
  }
  walk(a, b, '')
  return out
}
