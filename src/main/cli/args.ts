/**
 * Argument helpers shared by the commands: optional strings, JSON files, cues.
 */
import fs from 'node:fs'
import path from 'node:path'
import { cueSchema } from '../../shared/config'
import { RecallscopeError } from '../../shared/result'
import type { Cue } from '../../shared/types'
import { parseJsonSafe } from '../safety/json'

/** An option's value when it is a string, else undefined. */
export function str(x: unknown): string | undefined {
  return typeof x === 'string' ? x : undefined
}

/** Read and parse a JSON file named by a flag; NOT_FOUND / BAD_INPUT errors name the flag. */
export function readJsonFile(file: string, flag: string): unknown {
  const p = path.resolve(file)
  let text: string
  try {
    text = fs.readFileSync(p, 'utf8')
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
  if (!parsed.success) throw new RecallscopeError('BAD_INPUT', `--cue: ${parsed.error.issues[0]?.path.join('.') || '(cue)'}: ${parsed.error.issues[0]?.message}`)
  return parsed.data
}
