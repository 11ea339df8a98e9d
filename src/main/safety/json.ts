/**
 * JSON from untrusted places (agent DB columns, import files, request bodies) with a
 * nesting limit. V8 parses `'['*5000+']'*5000` fine, but every later recursive walk
 * (JSON.stringify of a response, structured clone over IPC, zod) overflows the stack,
 * so such values are refused at the door and counted as malformed instead.
 *
 * Error reasons never quote the input: V8's messages include a slice of the text,
 * which would echo the contents of whatever file was named (issue 10, `/etc/passwd`).
 */

/** Deepest nesting accepted. Real metadata is a few levels deep; 5000 is an attack. */
export const MAX_JSON_DEPTH = 200

export type SafeJson = { ok: true; value: unknown } | { ok: false; reason: string }

/**
 * Deepest `[`/`{` nesting of a JSON text, counted outside strings; stops counting once
 * `limit` is passed (so the cost is one linear scan, whatever the input).
 */
function jsonDepth(text: string, limit = Infinity): number {
  let depth = 0
  let max = 0
  let inString = false
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    if (inString) {
      if (c === 92 /* \ */) i++
      else if (c === 34 /* " */) inString = false
      continue
    }
    if (c === 34) inString = true
    else if (c === 91 /* [ */ || c === 123 /* { */) {
      if (++depth > max) {
        max = depth
        if (max > limit) return max
      }
    } else if (c === 93 /* ] */ || c === 125 /* } */) depth--
  }
  return max
}

/** The parse error, described without quoting the input ("at position N" when V8 gives one). */
function describeJsonError(e: unknown): string {
  const m = /position (\d+)/.exec(String((e as Error)?.message ?? ''))
  if (m) return `unexpected input at position ${m[1]}`
  if (/end of JSON input|Unterminated/i.test(String((e as Error)?.message ?? ''))) return 'unexpected end of input'
  return 'malformed JSON'
}

/** JSON.parse with a depth limit; never throws, never echoes the text. */
export function parseJsonSafe(text: string, maxDepth = MAX_JSON_DEPTH): SafeJson {
  if (jsonDepth(text, maxDepth) > maxDepth) return { ok: false, reason: `nested deeper than ${maxDepth} levels` }
  try {
    return { ok: true, value: JSON.parse(text) }
  } catch (e) {
    return { ok: false, reason: describeJsonError(e) }
  }
}

/** Depth of an already-parsed value (iterative; for values that did not come from text). */
export function valueDepth(v: unknown, limit = MAX_JSON_DEPTH): number {
  let max = 0
  const stack: [unknown, number][] = [[v, 1]]
  while (stack.length) {
    const [x, d] = stack.pop()!
    if (x === null || typeof x !== 'object') continue
    if (d > max) max = d
    if (max > limit) return max
    for (const y of Array.isArray(x) ? x : Object.values(x)) stack.push([y, d + 1])
  }
  return max
}
