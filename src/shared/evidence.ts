/**
 * Evidence attribution (issue 20 point 5): how much of the agent's decision — its
 * next message or tool call — each returned memory supports, by the words they
 * share; and the small text measures the counterfactual shows (similarity of two
 * answers, a word diff). Pure, no Node, no DOM: the renderer highlights words with
 * the same tokenizer the main process scored with.
 *
 * Token support of memory m for decision D (docs/guide/decision-trace.md):
 *   terms(x)  = the distinct content words of x (lower-cased letter/digit runs, stop
 *               words and 1-letter words dropped, a plural/possessive `s` folded)
 *   N         = returned memories with text;  df(t) = how many of them contain t
 *   w(t)      = ln((1 + N) / (1 + df(t))) + 1      (smoothed idf over the event's results)
 *   support(m) = Σ_{t ∈ terms(D) ∩ terms(m)} w(t) / Σ_{t ∈ terms(D)} w(t)
 * A word every returned memory has weighs least; a decision word no memory has
 * (the agent's own) weighs most and lowers every memory's support alike.
 */

const STOP = new Set(
  (
    'a about above after again against all am an and any are as at be because been before being below between both but by can could did do does doing ' +
    'down during each few for from further had has have having he her here hers herself him himself his how i if in into is it its itself just let me ' +
    'more most my myself no nor not now of off on once only or other our ours ourselves out over own same she should so some such than that the their ' +
    'theirs them themselves then there these they this those through to too under until up very was we were what when where which while who whom why ' +
    'will with would you your yours yourself yourselves also can could may might must shall us via per yes ok okay please'
  ).split(' '),
)

/** One word as a term: lower-cased, possessive and plural `s` folded; null for a stop word or a lone letter. */
export function termOf(word: string): string | null {
  let w = word.toLowerCase().replace(/['’]s$/, '')
  if (w.length < 2 && !/\d/.test(w)) return null
  if (STOP.has(w)) return null
  if (w.length > 4 && w.endsWith('ies')) w = `${w.slice(0, -3)}y`
  else if (w.length > 3 && w.endsWith('s') && !/(ss|us|is)$/.test(w)) w = w.slice(0, -1)
  return STOP.has(w) ? null : w
}

const WORD = /[\p{L}\p{N}]+(?:['’][\p{L}]+)?/gu

/** The words of a text with their offsets (for highlighting) and their term (null: not a content word). */
export function words(text: string): { word: string; start: number; term: string | null }[] {
  const out: { word: string; start: number; term: string | null }[] = []
  for (const m of text.matchAll(WORD)) out.push({ word: m[0], start: m.index, term: termOf(m[0]) })
  return out
}

/** The distinct content words of a text. */
export function termSet(text: string): Set<string> {
  const s = new Set<string>()
  for (const w of words(text)) if (w.term) s.add(w.term)
  return s
}

export interface TermWeight {
  term: string
  /** w(t) above */
  weight: number
  /** returned memories containing it */
  df: number
}

export interface TokenSupport {
  id: string
  /** support(m) above, in [0, 1] */
  support: number
  /** the decision's terms this memory has, heaviest first */
  shared: TermWeight[]
}

export interface TokenEvidence {
  /** the decision's terms with their weights, heaviest first */
  decisionTerms: TermWeight[]
  /** N: returned memories with text */
  memories: number
  rows: TokenSupport[]
  /** the same measure for all returned memories together (terms any of them has) */
  union: number
}

/** Token support of every returned memory for the decision (formula in the module comment). */
export function tokenEvidence(decision: string, memories: readonly { id: string; text: string | null }[]): TokenEvidence {
  const sets = memories.map((m) => (m.text ? termSet(m.text) : null))
  const n = sets.filter((s) => s !== null).length
  const dTerms = [...termSet(decision)]
  const weight = new Map<string, TermWeight>()
  for (const t of dTerms) {
    let df = 0
    for (const s of sets) if (s?.has(t)) df++
    weight.set(t, { term: t, weight: Math.log((1 + n) / (1 + df)) + 1, df })
  }
  const total = [...weight.values()].reduce((a, w) => a + w.weight, 0)
  const byWeight = (a: TermWeight, b: TermWeight) => b.weight - a.weight || a.term.localeCompare(b.term)
  const rows = memories.map((m, i) => {
    const s = sets[i]
    const shared = s ? dTerms.filter((t) => s.has(t)).map((t) => weight.get(t)!) : []
    shared.sort(byWeight)
    return { id: m.id, support: total > 0 ? shared.reduce((a, w) => a + w.weight, 0) / total : 0, shared }
  })
  const covered = [...weight.values()].filter((w) => w.df > 0).reduce((a, w) => a + w.weight, 0)
  return { decisionTerms: [...weight.values()].sort(byWeight), memories: n, rows, union: total > 0 ? covered / total : 0 }
}

/** Cosine of two vectors of the same length; null when either is all zeros or the lengths differ. */
export function cosine(a: ArrayLike<number>, b: ArrayLike<number>): number | null {
  if (a.length !== b.length || a.length === 0) return null
  let dot = 0
  let na = 0
  let nb = 0
  for (let i = 0; i < a.length; i++) {
    dot += a[i] * b[i]
    na += a[i] * a[i]
    nb += b[i] * b[i]
  }
  return na > 0 && nb > 0 ? dot / Math.sqrt(na * nb) : null
}

/**
 * How alike two answers are by their content words: Dice over the term sets,
 * 2·|A ∩ B| / (|A| + |B|) — 1 = the same words, 0 = none shared (two empty texts: 1).
 */
export function tokenSimilarity(a: string, b: string): number {
  const sa = termSet(a)
  const sb = termSet(b)
  if (sa.size + sb.size === 0) return 1
  let inter = 0
  for (const t of sa) if (sb.has(t)) inter++
  return (2 * inter) / (sa.size + sb.size)
}

export interface DiffOp {
  op: 'same' | 'add' | 'del'
  text: string
}

/** Longest texts diffed word by word (the LCS table is words(a) × words(b)); longer ones are diffed as whole texts. */
const DIFF_MAX_CELLS = 4_000_000

/**
 * A word-level diff of `a` → `b` (longest common subsequence of whitespace-separated
 * words): runs of kept, added and removed words, and how many words were added / removed.
 */
export function wordDiff(a: string, b: string): { ops: DiffOp[]; added: number; removed: number } {
  const x = a.split(/\s+/).filter(Boolean)
  const y = b.split(/\s+/).filter(Boolean)
  const ops: DiffOp[] = []
  const push = (op: DiffOp['op'], w: string) => {
    const last = ops[ops.length - 1]
    if (last && last.op === op) last.text += ` ${w}`
    else ops.push({ op, text: w })
  }
  if (x.length * y.length > DIFF_MAX_CELLS) {
    if (x.length) ops.push({ op: 'del', text: x.join(' ') })
    if (y.length) ops.push({ op: 'add', text: y.join(' ') })
    return { ops, added: y.length, removed: x.length }
  }
  // lcs[i][j] = LCS length of x[i..] and y[j..], one flat array
  const w = y.length + 1
  const lcs = new Uint32Array((x.length + 1) * w)
  for (let i = x.length - 1; i >= 0; i--)
    for (let j = y.length - 1; j >= 0; j--) lcs[i * w + j] = x[i] === y[j] ? lcs[(i + 1) * w + j + 1] + 1 : Math.max(lcs[(i + 1) * w + j], lcs[i * w + j + 1])
  let i = 0
  let j = 0
  let added = 0
  let removed = 0
  while (i < x.length || j < y.length) {
    if (i < x.length && j < y.length && x[i] === y[j]) {
      push('same', x[i])
      i++
      j++
    } else if (j < y.length && (i === x.length || lcs[i * w + j + 1] >= lcs[(i + 1) * w + j])) {
      push('add', y[j++])
      added++
    } else {
      push('del', x[i++])
      removed++
    }
  }
  return { ops, added, removed }
}
