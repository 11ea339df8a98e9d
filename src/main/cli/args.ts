/**
 * What every command shares: the Command / CliContext types and the argument
 * helpers (required strings, integers, JSON files, cues). Commands import this,
 * never index.ts (which imports every command).
 */
import path from 'node:path'
import type { ParseArgsConfig } from 'node:util'
import { cueSchema } from '../../shared/config'
import { mappingSchema, type Mapping } from '../../shared/mapping'
import { badInput, RecallscopeError } from '../../shared/result'
import type { Cue } from '../../shared/types'
import { parseJsonSafe } from '../safety/json'
import { readRegularFile } from '../store/safeFiles'

/** An option's value when it is a string, else undefined. */
export function str(x: unknown): string | undefined {
  return typeof x === 'string' ? x : undefined
}

/** Read and parse a JSON file named by a flag; NOT_FOUND / BAD_INPUT errors name the flag. */
export function readJsonFile(file: string, flag: string): unknown {
  const p = path.resolve(file)
  let text: string
  try {
    text = readRegularFile(p, `${flag} file`).toString('utf8')
  } catch (e) {
    throw new RecallscopeError((e as NodeJS.ErrnoException).code === 'ENOENT' ? 'NOT_FOUND' : 'BAD_INPUT', `${flag}: cannot read ${p}: ${(e as Error).message}`)
  }
  const parsed = parseJsonSafe(text)
  if (!parsed.ok) throw new RecallscopeError('BAD_INPUT', `${flag}: ${p} is not valid JSON (${parsed.reason})`)
  return parsed.value
}

/** `--cue` takes inline JSON or a file: {"goal", "currentStep", "openQuestions": []}. */
export function readCue(arg: string): Cue {
  const s = arg.trim()
  let raw: unknown
  if (s.startsWith('{')) {
    const parsed = parseJsonSafe(s)
    if (!parsed.ok) throw new RecallscopeError('BAD_INPUT', `--cue is not valid JSON (${parsed.reason})`)
    raw = parsed.value
  } else raw = readJsonFile(s, '--cue')
  const parsed = cueSchema.safeParse(raw)
  if (!parsed.success) throw badInput('--cue', parsed.error, '(cue)')
  return parsed.data
}

export interface CliIo {
  out: (s: string) => void
  err: (s: string) => void
}

export interface CliContext {
  /** parsed option values */
  values: Record<string, string | boolean | (string | boolean)[] | undefined>
  positionals: string[]
  json: boolean
  io: CliIo
}

export interface Command {
  name: string
  summary: string
  usage: string
  options: NonNullable<ParseArgsConfig['options']>
  /** Allow positional arguments (sub-commands such as `import engram`). */
  positionals?: boolean
  run(ctx: CliContext): Promise<number> | number
}

/** A required string option; BAD_INPUT naming the flag and the usage otherwise. */
export function requireString(ctx: CliContext, key: string, usage: string): string {
  const v = ctx.values[key]
  if (typeof v !== 'string' || v.trim() === '') throw new RecallscopeError('BAD_INPUT', `--${key} is required. Usage: ${usage}`)
  return v
}

export function optionalInt(ctx: CliContext, key: string, min = 0): number | undefined {
  const v = ctx.values[key]
  if (v === undefined) return undefined
  const n = Number(v)
  if (typeof v !== 'string' || !Number.isInteger(n) || n < min)
    throw new RecallscopeError('BAD_INPUT', `--${key} must be an integer ≥ ${min} (got ${String(v)})`)
  return n
}

/** `--map FILE`: a column mapping (JSON, shared/mapping.ts) to open one table of any SQLite file or Postgres schema. */
export function readMapping(ctx: CliContext): Mapping | undefined {
  const file = ctx.values.map
  if (file === undefined) return undefined
  if (typeof file !== 'string' || file.trim() === '') throw new RecallscopeError('BAD_INPUT', '--map takes a mapping file (JSON)')
  const parsed = mappingSchema.safeParse(readJsonFile(file, '--map'))
  if (!parsed.success) throw badInput('--map', parsed.error, '(mapping)')
  return parsed.data
}
