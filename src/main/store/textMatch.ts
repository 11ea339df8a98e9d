/**
 * Text matching of logged recall results to memories (events/match.ts): the
 * one normalisation every source applies, in JS (SQLite runs it as a
 * registered function) and as the equivalent Postgres expression.
 */

/** Quote characters removed before comparing: straight, curly, backtick, guillemets. */
const QUOTES = `"'\`“”‘’«»`
const QUOTE_RE = new RegExp(`[${QUOTES}]`, 'g')

/**
 * The normalised form of a text: quotes removed, runs of whitespace to one
 * space, trimmed, lower-cased. Two texts that differ only in those match as
 * `normalized`.
 */
export function normalizeMatchText(s: string): string {
  return s.replace(QUOTE_RE, '').replace(/\s+/g, ' ').trim().toLowerCase()
}

/** The same normalisation as a Postgres expression over `col`. */
export function pgNormalizeExpr(col: string): string {
  const quotes = QUOTES.replace(/'/g, "''")
  return `lower(btrim(regexp_replace(translate(${col}, '${quotes}', ''), '\\s+', ' ', 'g')))`
}

/** What a text lookup found: text → the ids of the memories with that (normalised) content, in storage order. */
export interface TextMatches {
  exact: Map<string, string[]>
  normalized: Map<string, string[]>
}

/** At most this many texts are looked up in one call (events/match.ts batches). */
export const TEXT_LOOKUP_MAX = 5000

/**
 * A lookup's distinct texts (capped at TEXT_LOOKUP_MAX each) and the result it
 * fills: `add(kind, text, id)` appends in the order the store returns rows.
 */
export function textLookup(q: { texts: string[]; normalized: string[] }): {
  texts: string[]
  norms: string[]
  out: TextMatches
  add: (kind: keyof TextMatches, text: unknown, id: unknown) => void
} {
  const out: TextMatches = { exact: new Map(), normalized: new Map() }
  return {
    texts: [...new Set(q.texts)].slice(0, TEXT_LOOKUP_MAX),
    norms: [...new Set(q.normalized)].slice(0, TEXT_LOOKUP_MAX),
    out,
    add: (kind, text, id) => {
      const k = String(text)
      const l = out[kind].get(k)
      if (l) l.push(String(id))
      else out[kind].set(k, [String(id)])
    },
  }
}
