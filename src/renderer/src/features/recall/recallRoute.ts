/**
 * A recall request in the URL (#/recall?…), compactly: the query, the preset,
 * and only the config fields that differ from that preset — a weight dragged
 * is `config={"weights":{"recency":0.9}}`, not the whole RecallConfig.
 */
import type { RecallConfig } from '../../../../shared/types'
import { cueSchema, mergeConfig, partialConfigSchema, recallConfigSchema, type PartialRecallConfig } from '../../../../shared/config'
import { z } from 'zod'
import type { RouteParams } from '../../lib/router'
import type { RecallRequest } from './useRecall'

const isPlain = (v: unknown): v is Record<string, unknown> => !!v && typeof v === 'object' && !Array.isArray(v)

/**
 * The partial config that `mergeConfig(base, ·)` turns back into `edited`: the
 * top-level fields that differ, and inside objects (weights, scope, recency…)
 * only the keys that differ. null when nothing differs. A key the edit removed
 * (e.g. a scope field the preset set) cannot be said by a merge patch and is
 * left out.
 */
export function diffConfig(base: RecallConfig, edited: RecallConfig): PartialRecallConfig | null {
  const b = base as unknown as Record<string, unknown>
  const out: Record<string, unknown> = {}
  for (const [k, v] of Object.entries(edited as unknown as Record<string, unknown>)) {
    if (v === undefined || JSON.stringify(v) === JSON.stringify(b[k])) continue
    const was = b[k]
    if (isPlain(v) && isPlain(was)) {
      const sub: Record<string, unknown> = {}
      for (const [k2, v2] of Object.entries(v)) if (v2 !== undefined && JSON.stringify(v2) !== JSON.stringify(was[k2])) sub[k2] = v2
      if (Object.keys(sub).length) out[k] = sub
    } else out[k] = v
  }
  // The same shape as RecallConfig minus unchanged keys: a valid partial by construction.
  return Object.keys(out).length ? out : null
}

/** The URL parameters for a request and its config (`base` = the preset's config; `now` only when the user set it). */
export function encodeRecall(req: RecallRequest, config: RecallConfig, base: RecallConfig | undefined, nowIsUsers: boolean): RouteParams {
  const diff = base ? diffConfig(base, config) : config
  return {
    query: req.query || undefined,
    preset: req.preset === 'fieldguide' ? undefined : req.preset,
    now: nowIsUsers && req.now !== null ? String(req.now) : undefined,
    cue: req.useCue ? JSON.stringify(req.cue) : undefined,
    embedder: req.embedder ?? undefined,
    config: diff ? JSON.stringify(diff) : undefined,
  }
}

/** A JSON parameter checked by its schema; anything else (hand-edited, truncated) is ignored, never thrown. */
function parseJson<T>(raw: string | undefined, check: (v: unknown) => { success: true; data: T } | { success: false }): T | null {
  if (!raw) return null
  try {
    const r = check(JSON.parse(raw))
    return r.success ? r.data : null
  } catch {
    return null
  }
}

/** The config overrides in the URL (`config=`, a partial over the preset), or null when absent or not a valid partial config. */
export function decodeConfig(params: RouteParams): PartialRecallConfig | null {
  return parseJson(params.config, (v) => partialConfigSchema.safeParse(v))
}

/** The request part of the URL (the config is `decodeConfig`, merged over the preset once presets are loaded). */
export function decodeRequest(params: RouteParams): RecallRequest {
  const cue = parseJson(params.cue, (v) => cueSchema.safeParse(v))
  const now = params.now !== undefined && Number.isFinite(Number(params.now)) ? Number(params.now) : null
  return {
    query: params.query ?? '',
    useCue: !!cue,
    cue: { goal: cue?.goal ?? '', currentStep: cue?.currentStep ?? '', openQuestions: cue?.openQuestions ?? [] },
    now,
    embedder: params.embedder ?? null,
    preset: params.preset ?? 'fieldguide',
  }
}

/** The preset's config with the URL's overrides. */
export function configFromParams(base: RecallConfig, params: RouteParams): RecallConfig {
  return mergeConfig(base, decodeConfig(params) ?? undefined)
}

const baselineSchema = z.strictObject({ label: z.string().max(200), config: recallConfigSchema })

/**
 * The pinned baseline in the URL (`pin=`): its label and whole config, so a
 * copied link or a reload compares with the same config even after the preset
 * or the sliders changed (a diff against the current preset could not say that).
 */
export function encodeBaseline(b: { label: string; config: RecallConfig } | null): string | undefined {
  return b ? JSON.stringify({ label: b.label, config: b.config }) : undefined
}

/** The pinned baseline from the URL, or null when absent or not a valid config (never thrown). */
export function decodeBaseline(params: RouteParams): { label: string; config: RecallConfig } | null {
  return parseJson(params.pin, (v) => baselineSchema.safeParse(v))
}
