/**
 * From what a caller says (preset, partial config, `--set` edits, scope flags,
 * embedder spec or explicit vector, `now`) to a runRecall call. Shared by the
 * CLI (`recallscope recall`) and the `recall.*` handlers so both build configs
 * and pick embedders the same way.
 */
import { mergeConfig, partialConfigSchema, setByPath, type PartialRecallConfig } from '../../shared/config'
import { DEFAULT_PRESET, getPreset, missingRequirements, validateConfig } from '../../shared/presets'
import { badInput, RecallscopeError } from '../../shared/result'
import type { Cue, RecallConfig, RecallTrace } from '../../shared/types'
import { createEmbedder, type EmbedderOptions } from '../embed/index'
import type { MemorySource } from '../store/source'
import { runRecall } from './engine'
import { isUnlabelledModel } from './models'

export interface ConfigRequest {
  /** preset or `preset:variant`. @default fieldguide */
  preset?: string | null
  /** partial config merged over the preset */
  config?: unknown
  /** scope shortcuts (CLI --agent/--user/--session/--tenant), applied after `config` */
  scope?: { agentId?: string; userId?: string; sessionId?: string; tenantId?: string }
  /** `a.b=value` edits, applied last (values parsed as JSON when they parse) */
  set?: string[]
}

/** Preset → partial config → scope shortcuts → `--set` edits → validated full config. */
export function buildConfig(req: ConfigRequest): { config: RecallConfig; preset: string; requires: string[] } {
  const presetName = req.preset ?? DEFAULT_PRESET
  const p = getPreset(presetName)
  let partial: PartialRecallConfig | undefined
  if (req.config !== undefined && req.config !== null) {
    const parsed = partialConfigSchema.safeParse(req.config)
    if (!parsed.success) throw badInput('Invalid config', parsed.error, '(config)')
    partial = parsed.data
  }
  let cfg: RecallConfig = mergeConfig(p.config, partial)
  const sc = req.scope ?? {}
  cfg.scope = { ...cfg.scope }
  for (const k of ['agentId', 'userId', 'sessionId', 'tenantId'] as const) if (sc[k] !== undefined) cfg.scope[k] = sc[k]
  for (const edit of req.set ?? []) {
    const eq = edit.indexOf('=')
    if (eq <= 0) throw new RecallscopeError('BAD_INPUT', `--set takes key=value (got "${edit}")`)
    try {
      cfg = setByPath(cfg, edit.slice(0, eq).trim(), edit.slice(eq + 1))
    } catch (e) {
      throw new RecallscopeError('BAD_INPUT', (e as Error).message)
    }
  }
  return { config: validateConfig(cfg), preset: p.name, requires: p.requires }
}

/** Throw a clear BAD_INPUT when a preset's required scope is missing (seed 002/004 recall inside one session). */
export function checkRequirements(preset: string, requires: readonly string[], config: RecallConfig): void {
  const missing = missingRequirements(requires, config.scope)
  if (missing.length === 0) return
  const flag: Record<string, string> = { sessionId: '--session ID', agentId: '--agent ID', userId: '--user ID' }
  throw new RecallscopeError(
    'BAD_INPUT',
    `Preset ${preset} recalls within scope.${missing.join(', scope.')}: pass ${missing.map((m) => flag[m] ?? m).join(' ')} (or --set scope.${missing[0]}=…)`,
    {
      missing,
    },
  )
}

/** `hashing` when the DB holds hashing vectors, else the first stored model via Ollama, else `none`. */
export function defaultEmbedderSpec(store: MemorySource, owner: 'memory' | 'session' = 'memory'): string {
  const models = store.storedModels(owner)
  if (models.some((m) => m.startsWith('hashing'))) return 'hashing'
  // Vectors whose store records no model (`mem0:1536`): the embedder that made them is unknown,
  // so there is no default to guess — lexical recall until the user picks one (any of that length works).
  const named = models.filter((m) => !isUnlabelledModel(m))
  if (named.length > 0) return `ollama:${named[0]}`
  return 'none'
}

/** `--now ISO|ms`: epoch ms or an ISO-8601 date. */
export function parseNow(v: string | number | undefined | null, fallback: number, flag = '--now'): number {
  if (v === undefined || v === null || v === '') return fallback
  // Date's range: anything beyond it cannot be shown or compared as a time (1e308, 99999999999999999999).
  const inRange = (n: number) => Number.isFinite(n) && Math.abs(n) <= 8.64e15
  if (typeof v === 'number') {
    if (!inRange(v)) throw new RecallscopeError('BAD_INPUT', `${flag.replace(/^--/, '')} must be epoch ms within ±8.64e15 (got ${v})`)
    return v
  }
  const s = v.trim()
  if (/^-?\d+(\.\d+)?$/.test(s)) {
    if (!inRange(Number(s))) throw new RecallscopeError('BAD_INPUT', `${flag} must be epoch ms within ±8.64e15 or an ISO date (got "${s.slice(0, 40)}")`)
    return Number(s)
  }
  const t = Date.parse(s)
  if (Number.isNaN(t)) throw new RecallscopeError('BAD_INPUT', `${flag} must be epoch ms or an ISO date such as 2026-10-20T12:00:00Z (got "${s.slice(0, 40)}")`)
  return t
}

export interface RunRequest extends ConfigRequest {
  query?: string
  cue?: Cue | null
  /** epoch ms; the caller's clock is read at the boundary, never inside the engine */
  now: number
  /** embedder spec; @default defaultEmbedderSpec(store) */
  embedder?: string | null
  embedderOptions?: EmbedderOptions
  queryVector?: ArrayLike<number> | null
  signal?: AbortSignal
}

/** Build the config, pick the embedder, run. */
export async function recallFromRequest(store: MemorySource, req: RunRequest): Promise<RecallTrace> {
  const { config, preset, requires } = buildConfig(req)
  if (req.preset) checkRequirements(req.preset, requires, config)
  const query = req.query ?? ''
  if (query.trim() === '' && !req.cue && config.mode !== 'session' && config.mode !== 'recency')
    throw new RecallscopeError('BAD_INPUT', 'A query (or a cue) is required')
  const owner = config.unit === 'session' ? 'session' : 'memory'
  const embedder = req.queryVector ? null : createEmbedder(req.embedder ?? defaultEmbedderSpec(store, owner), req.embedderOptions ?? {})
  return runRecall(store, { text: query, cue: req.cue ?? null }, config, req.now, {
    preset: req.preset ?? preset,
    embedder,
    queryVector: req.queryVector ?? null,
    signal: req.signal,
  })
}
