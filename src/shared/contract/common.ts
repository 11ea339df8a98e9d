/**
 * What every domain file of the contract shares: the output-type marker and the small input schemas
 * (ids, times, paging, names), so one rule holds for every channel.
 */
import { z } from 'zod'

/** Marker for an output type (no runtime value). */
export const out = <T>() => undefined as unknown as T

export const id = z.string().min(1).max(1000)
/** A seed for sampling and search (map layout, tune). @default 1 */
export const seedSchema = z
  .number()
  .int()
  .min(0)
  .max(2 ** 31)
  .default(1)
// Date's own range (±8.64e15 ms): beyond it `new Date(ms).toISOString()` throws (issue 10: now = 1e308).
export const ms = z
  .number()
  .refine(Number.isFinite, 'must be a finite number')
  .refine((v) => Math.abs(v) <= 8.64e15, 'must be within ±8.64e15 ms (a Date)')
export const offset = z.number().int().min(0).max(100_000_000).default(0)
export const limit = z.number().int().min(1).max(1000).default(50)
export const strList = z.array(z.string().max(1000)).max(10_000)
export const storePath = z.string().trim().min(1, 'path is required').max(4096)
export const presetName = z.string().trim().min(1).max(100)
/** A saved config's name: trimmed, 1–120 characters. */
export const configName = z.string().trim().min(1, 'name is required').max(120, 'name is at most 120 characters')
