/**
 * The config under test of the Evaluate screen in the URL (#/eval?preset=…&config=…&k=…&split=…),
 * beside its tab, run and tune: a copied Evaluate/Tune link or a reload opens the same preset and
 * overrides. The overrides use Recall's `config=` parameter (a partial RecallConfig as compact
 * JSON, read back by the same check); defaults are left out, and a bad value is ignored for the
 * default, never thrown.
 */
import type { RouteParams } from '../../lib/router'
import { decodeConfig } from '../recall/recallRoute'
import { DEFAULT_SETTINGS, parseOverrides, type EvalSettings } from './settings'

const SPLITS: readonly EvalSettings['split'][] = ['all', 'train', 'test']
/** The k input's own bounds. */
const MAX_K = 1000
/** Longer than any preset:variant name; a longer value is not one. */
const MAX_PRESET = 200

/**
 * The URL parameters for the config under test. Overrides that are not a valid JSON object (the
 * user is still typing) leave `config` out of the patch, so the URL keeps the last valid ones.
 */
export function encodeEval(s: EvalSettings): RouteParams {
  const out: RouteParams = {
    preset: s.preset === DEFAULT_SETTINGS.preset ? undefined : s.preset,
    k: s.k === DEFAULT_SETTINGS.k ? undefined : String(s.k),
    split: s.split === DEFAULT_SETTINGS.split ? undefined : s.split,
  }
  const o = parseOverrides(s.overrides)
  if (o.ok) out.config = o.config && Object.keys(o.config).length ? JSON.stringify(o.config) : undefined
  return out
}

/**
 * The config under test from the URL, each field checked on its own: overrides that are not a
 * valid partial config, a k that is not a whole number in 1..1000 or an unknown split give the
 * default. Whether the preset exists is known once the presets load (the view checks it then).
 */
export function decodeEval(params: RouteParams): EvalSettings {
  const overrides = decodeConfig(params)
  const k = Number(params.k)
  const preset = params.preset?.trim()
  return {
    preset: preset && preset.length <= MAX_PRESET ? preset : DEFAULT_SETTINGS.preset,
    overrides: overrides && Object.keys(overrides).length ? JSON.stringify(overrides, null, 2) : DEFAULT_SETTINGS.overrides,
    k: params.k !== undefined && Number.isInteger(k) && k >= 1 && k <= MAX_K ? k : DEFAULT_SETTINGS.k,
    split: SPLITS.find((x) => x === params.split) ?? DEFAULT_SETTINGS.split,
  }
}

/** A list of run ids from the URL (`runs=a,b`, `checked=a,b`): in order, without blanks or repeats. */
export function decodeIdList(s: string | undefined): string[] {
  return [...new Set((s ?? '').split(',').filter(Boolean))]
}
