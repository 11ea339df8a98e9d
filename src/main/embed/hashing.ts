/**
 * The offline embedder: feature hashing of words, word bigrams and character
 * trigrams into a fixed number of signed buckets, L2-normalised. Deterministic
 * and instant, with no model server. It is honest about what it is: similarity
 * is lexical-level (shared words and word pieces), not semantic.
 */

export const HASHING_DIM = 256
export const HASHING_MODEL = `hashing-${HASHING_DIM}`

const STOP = new Set(
  'a an and are as at be been but by can did do does for from had has have he her his i if in into is it its me my no not of on or our she so than that the their them then there these they this to up us was we were what when where which who will with you your'.split(
    ' ',
  ),
)

/** FNV-1a 32-bit. */
function fnv1a(s: string): number {
  let h = 0x811c9dc5
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i)
    h = Math.imul(h, 0x01000193)
  }
  return h >>> 0
}

function add(v: Float32Array, feature: string, weight: number): void {
  const h = fnv1a(feature)
  const bucket = h % v.length
  // The top bit picks the sign so collisions cancel out on average.
  v[bucket] += h & 0x80000000 ? -weight : weight
}

/** Embed one text. Same text, same vector, on every machine. */
export function hashEmbed(text: string, dim = HASHING_DIM): Float32Array {
  const v = new Float32Array(dim)
  const words = (text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []).filter((w) => !STOP.has(w))
  for (let i = 0; i < words.length; i++) {
    const w = words[i]
    add(v, `w:${w}`, 1)
    if (i + 1 < words.length) add(v, `b:${w} ${words[i + 1]}`, 0.5)
    const padded = `^${w}$`
    for (let j = 0; j + 3 <= padded.length; j++) add(v, `c:${padded.slice(j, j + 3)}`, 0.25)
  }
  let s = 0
  for (let i = 0; i < dim; i++) s += v[i] * v[i]
  if (s > 0) {
    const inv = 1 / Math.sqrt(s)
    for (let i = 0; i < dim; i++) v[i] *= inv
  }
  return v
}
