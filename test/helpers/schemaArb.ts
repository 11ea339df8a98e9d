/**
 * fast-check arbitraries from a channel's contract: the zod input schema is turned into
 * JSON Schema (`z.toJSONSchema`) and each node into a generator, so a new field or channel
 * is fuzzed without touching the test. `hints` bias named properties toward interesting
 * values (real ids, hostile paths, an unreachable host) without ever leaving the schema.
 */
import fc from 'fast-check'
import { z } from 'zod'

type JsonSchema = {
  type?: string | string[]
  properties?: Record<string, JsonSchema>
  required?: string[]
  additionalProperties?: boolean | JsonSchema
  items?: JsonSchema
  minItems?: number
  maxItems?: number
  minLength?: number
  maxLength?: number
  minimum?: number
  maximum?: number
  exclusiveMinimum?: number
  exclusiveMaximum?: number
  enum?: unknown[]
  const?: unknown
  anyOf?: JsonSchema[]
  oneOf?: JsonSchema[]
  default?: unknown
}

export type Hints = Record<string, () => fc.Arbitrary<unknown>>

/** Strings that break naive code: traversal, NUL, SQL, LIKE/FTS syntax, prototype keys, odd Unicode. */
const NASTY = [
  '',
  ' ',
  '..',
  '../../../../etc/passwd',
  '%',
  '_',
  '\\',
  '"',
  "'",
  "'; DROP TABLE memories;--",
  'NEAR(',
  'a OR b',
  '*',
  '^',
  '\u0000',
  '__proto__',
  'constructor',
  '\u202e',
  '\ud800',
  '🙂'.repeat(5),
  'x'.repeat(300),
]

const clampLen = (min: number | undefined, max: number | undefined) => ({ minLength: min ?? 0, maxLength: Math.max(min ?? 0, Math.min(max ?? 24, 24)) })

function stringArb(s: JsonSchema): fc.Arbitrary<string> {
  const len = clampLen(s.minLength, s.maxLength)
  const fits = NASTY.filter((x) => x.length >= len.minLength && x.length <= (s.maxLength ?? Infinity))
  const gen = fc.oneof({ weight: 4, arbitrary: fc.string(len) }, { weight: 1, arbitrary: fc.string({ ...len, unit: 'grapheme' }) })
  return fits.length ? fc.oneof({ weight: 5, arbitrary: gen }, { weight: 1, arbitrary: fc.constantFrom(...fits) }) : gen
}

function numberArb(s: JsonSchema, integer: boolean): fc.Arbitrary<number> {
  let min = s.minimum ?? (s.exclusiveMinimum !== undefined ? s.exclusiveMinimum + (integer ? 1 : 1e-9) : undefined)
  let max = s.maximum ?? (s.exclusiveMaximum !== undefined ? s.exclusiveMaximum - (integer ? 1 : 1e-9) : undefined)
  if (integer) {
    const lo = Math.max(min ?? -1e12, Number.MIN_SAFE_INTEGER)
    const hi = Math.min(max ?? 1e12, Number.MAX_SAFE_INTEGER)
    const edges = [lo, hi, 0, 1].filter((x) => x >= lo && x <= hi)
    return fc.oneof(
      { weight: 4, arbitrary: fc.integer({ min: Math.ceil(lo), max: Math.floor(hi) }) },
      { weight: 1, arbitrary: fc.constantFrom(...edges.map(Math.round)) },
    )
  }
  min ??= -1e15
  max ??= 1e15
  const edges = [min, max, 0, 1, -1, 0.5, 1e-300].filter((x) => x >= min && x <= max)
  return fc.oneof({ weight: 4, arbitrary: fc.double({ min, max, noNaN: true, noDefaultInfinity: true }) }, { weight: 1, arbitrary: fc.constantFrom(...edges) })
}

/** The arbitrary for one JSON Schema node. */
function arbOf(s: JsonSchema, hints: Hints = {}, name = '', depth = 0): fc.Arbitrary<unknown> {
  if (name && hints[name]) return hints[name]()
  if (s.const !== undefined) return fc.constant(s.const)
  if (s.enum) return fc.constantFrom(...s.enum)
  const alts = s.anyOf ?? s.oneOf
  if (alts) return fc.oneof(...alts.map((a) => arbOf(a, hints, name, depth)))
  const type = Array.isArray(s.type) ? s.type : s.type ? [s.type] : []
  if (type.length > 1) return fc.oneof(...type.map((t) => arbOf({ ...s, type: t }, hints, name, depth)))
  switch (type[0]) {
    case 'string':
      return stringArb(s)
    case 'number':
      return numberArb(s, false)
    case 'integer':
      return numberArb(s, true)
    case 'boolean':
      return fc.boolean()
    case 'null':
      return fc.constant(null)
    case 'array': {
      const item = s.items ? arbOf(s.items, hints, name, depth + 1) : fc.jsonValue({ maxDepth: 1 })
      const minLength = s.minItems ?? 0
      return fc.array(item, { minLength, maxLength: Math.max(minLength, Math.min(s.maxItems ?? 6, depth > 2 ? 2 : 6)) })
    }
    case 'object': {
      const props = s.properties ?? {}
      const model: Record<string, fc.Arbitrary<unknown>> = {}
      for (const [k, v] of Object.entries(props)) model[k] = arbOf(v, hints, k, depth + 1)
      const rec = fc.record(model, { requiredKeys: (s.required ?? []).filter((k) => k in props) })
      if (s.additionalProperties && typeof s.additionalProperties === 'object') {
        const extra = fc.dictionary(fc.string({ maxLength: 12 }), arbOf(s.additionalProperties, hints, '', depth + 1), { maxKeys: 4 })
        return fc.tuple(rec, extra).map(([a, b]) => ({ ...b, ...a }))
      }
      return rec
    }
    default:
      return fc.jsonValue({ maxDepth: 2 })
  }
}

/** JSON Schema of a zod input schema (what a caller may send). */
function jsonSchemaOf(schema: z.ZodType): JsonSchema {
  return z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' }) as JsonSchema
}

/**
 * Inputs for a channel: mostly schema-valid (to reach the handler), some broken on purpose
 * (a random JSON value, or a valid object with one field replaced by anything).
 */
export function channelInputArb(schema: z.ZodType, hints: Hints = {}): fc.Arbitrary<unknown> {
  const valid = arbOf(jsonSchemaOf(schema), hints)
  const broken = fc.oneof(
    fc.jsonValue({ maxDepth: 3 }),
    fc.tuple(valid, fc.string({ maxLength: 16 }), fc.jsonValue({ maxDepth: 2 })).map(([v, k, x]) => {
      if (!v || typeof v !== 'object' || Array.isArray(v)) return x
      const keys = Object.keys(v)
      const key = keys.length && k.length % 2 === 0 ? keys[k.length % keys.length] : k
      return { ...v, [key]: x }
    }),
  )
  return fc.oneof({ weight: 7, arbitrary: valid }, { weight: 3, arbitrary: broken })
}
