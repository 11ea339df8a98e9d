/**
 * A safe parser of Python literals as `repr()` prints them: the lists and
 * dicts Letta's tool results carry inside their JSON (`"message": "[{'id': …}]"`).
 * Strings (single / double / triple quoted, escapes, r/b/u prefixes), ints,
 * floats (inf / nan too), None / True / False, lists, tuples, dicts and sets.
 * Nothing is evaluated: anything else (a call such as `datetime.datetime(…)`,
 * a name) throws a SyntaxError naming the offset. Tuples and sets come back as
 * arrays; dict keys as strings.
 */

/** Parse one Python literal (the whole text, surrounding whitespace allowed). */
export function parsePyLiteral(text: string): unknown {
  const p = new PyParser(text)
  const v = p.value(0)
  p.ws()
  if (p.i < text.length) throw p.err('unexpected text after the value')
  return v
}

/** Nesting deeper than this is refused (a hostile result must not blow the stack). */
const MAX_DEPTH = 200

class PyParser {
  i = 0
  constructor(readonly s: string) {}

  err(why: string): SyntaxError {
    return new SyntaxError(`Python literal: ${why} at offset ${this.i}`)
  }

  ws(): void {
    while (this.i < this.s.length && /\s/.test(this.s[this.i])) this.i++
  }

  value(depth: number): unknown {
    if (depth > MAX_DEPTH) throw this.err('nested too deeply')
    this.ws()
    const c = this.s[this.i]
    if (c === undefined) throw this.err('unexpected end')
    if (c === '[') return this.seq(']', depth)
    if (c === '(') return this.seq(')', depth)
    if (c === '{') return this.dictOrSet(depth)
    if (c === '"' || c === "'") return this.str(false)
    const prefix = /^([rRbBuU]{1,2})(?=['"])/.exec(this.s.slice(this.i, this.i + 3))
    if (prefix) {
      this.i += prefix[1].length
      return this.str(/r/i.test(prefix[1]))
    }
    const word = /^(None|True|False|inf|nan)\b/.exec(this.s.slice(this.i, this.i + 6))
    if (word) {
      this.i += word[1].length
      return word[1] === 'None' ? null : word[1] === 'True' ? true : word[1] === 'False' ? false : word[1] === 'inf' ? Infinity : NaN
    }
    const num = /^[-+]?(\d[\d_]*\.?[\d_]*(?:[eE][-+]?\d+)?|\.\d[\d_]*(?:[eE][-+]?\d+)?|inf\b|nan\b)/.exec(this.s.slice(this.i, this.i + 400))
    if (num) {
      this.i += num[0].length
      const t = num[0].replace(/_/g, '')
      if (/inf$/.test(t)) return t.startsWith('-') ? -Infinity : Infinity
      if (/nan$/.test(t)) return NaN
      return Number(t)
    }
    throw this.err(`unexpected ${JSON.stringify(c)}`)
  }

  seq(close: string, depth: number): unknown[] {
    this.i++
    const out: unknown[] = []
    for (;;) {
      this.ws()
      if (this.s[this.i] === close) {
        this.i++
        return out
      }
      out.push(this.value(depth + 1))
      this.ws()
      if (this.s[this.i] === ',') this.i++
      else if (this.s[this.i] !== close) throw this.err(`expected , or ${close}`)
    }
  }

  dictOrSet(depth: number): Record<string, unknown> | unknown[] {
    this.i++
    this.ws()
    if (this.s[this.i] === '}') {
      this.i++
      return {}
    }
    const first = this.value(depth + 1)
    this.ws()
    if (this.s[this.i] !== ':') {
      // a set
      const out = [first]
      for (;;) {
        this.ws()
        if (this.s[this.i] === ',') this.i++
        this.ws()
        if (this.s[this.i] === '}') {
          this.i++
          return out
        }
        out.push(this.value(depth + 1))
      }
    }
    const out: Record<string, unknown> = {}
    let key: unknown = first
    for (;;) {
      this.ws()
      if (this.s[this.i] !== ':') throw this.err('expected :')
      this.i++
      Object.defineProperty(out, String(key), { value: this.value(depth + 1), enumerable: true, writable: true, configurable: true })
      this.ws()
      if (this.s[this.i] === ',') this.i++
      this.ws()
      if (this.s[this.i] === '}') {
        this.i++
        return out
      }
      key = this.value(depth + 1)
    }
  }

  str(raw: boolean): string {
    const q = this.s[this.i]
    const triple = this.s.startsWith(q.repeat(3), this.i)
    const end = triple ? q.repeat(3) : q
    this.i += end.length
    let out = ''
    for (;;) {
      if (this.i >= this.s.length) throw this.err('unterminated string')
      if (this.s.startsWith(end, this.i)) {
        this.i += end.length
        return out
      }
      const c = this.s[this.i]
      if (!triple && c === '\n') throw this.err('newline in a string')
      if (c !== '\\') {
        out += c
        this.i++
        continue
      }
      const n = this.s[this.i + 1]
      if (n === undefined) throw this.err('unterminated string')
      if (raw) {
        out += c + n
        this.i += 2
        continue
      }
      this.i += 2
      const simple: Record<string, string> = {
        n: '\n',
        t: '\t',
        r: '\r',
        '\\': '\\',
        "'": "'",
        '"': '"',
        a: '\x07',
        b: '\b',
        f: '\f',
        v: '\v',
        '0': '\0',
        '\n': '',
      }
      if (n in simple && !(n === '0' && /[0-7]/.test(this.s[this.i] ?? ''))) out += simple[n]
      else if (n === 'x' || n === 'u' || n === 'U') {
        const len = n === 'x' ? 2 : n === 'u' ? 4 : 8
        const hex = this.s.slice(this.i, this.i + len)
        if (!/^[0-9a-fA-F]+$/.test(hex) || hex.length !== len) throw this.err(`bad \\${n} escape`)
        out += String.fromCodePoint(parseInt(hex, 16))
        this.i += len
      } else if (/[0-7]/.test(n)) {
        const oct = /^[0-7]{1,3}/.exec(this.s.slice(this.i - 1, this.i + 2))![0]
        out += String.fromCharCode(parseInt(oct, 8))
        this.i += oct.length - 1
      } else out += `\\${n}` // Python keeps unknown escapes as written
    }
  }
}
