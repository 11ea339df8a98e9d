import { describe, expect, it } from 'vitest'
import fc from 'fast-check'
import { collectExport, csvField, ExportCancelledError, type ExportColumn } from './exportTable'

/**
 * An RFC 4180 reader written here, independent of the exporter: a character
 * state machine over quoted / unquoted fields, CRLF (or LF) record ends.
 */
function parseCsv(text: string): string[][] {
  const records: string[][] = []
  let field = ''
  let record: string[] = []
  let i = 0
  let quoted = false
  let fieldStarted = false
  while (i < text.length) {
    const ch = text[i]
    if (quoted) {
      if (ch === '"') {
        if (text[i + 1] === '"') {
          field += '"'
          i += 2
          continue
        }
        quoted = false
        i++
        continue
      }
      field += ch
      i++
      continue
    }
    if (ch === '"' && !fieldStarted) {
      quoted = true
      fieldStarted = true
      i++
      continue
    }
    if (ch === '"') throw new Error(`stray quote at ${i}`)
    if (ch === ',') {
      record.push(field)
      field = ''
      fieldStarted = false
      i++
      continue
    }
    if (ch === '\r' || ch === '\n') {
      if (ch === '\r' && text[i + 1] !== '\n') throw new Error(`bare CR at ${i}`)
      record.push(field)
      records.push(record)
      record = []
      field = ''
      fieldStarted = false
      i += ch === '\r' ? 2 : 1
      continue
    }
    field += ch
    fieldStarted = true
    i++
  }
  if (quoted) throw new Error('unterminated quote')
  if (fieldStarted || record.length) {
    record.push(field)
    records.push(record)
  }
  return records
}

/** What a text cell must read as after export: formula starters get a leading apostrophe (OWASP). */
function guarded(s: string): string {
  return ['=', '+', '-', '@', '\t', '\r'].includes(s.charAt(0)) ? `'${s}` : s
}

interface Row {
  id: string
  text: string
  n: number | null
}
const columns: ExportColumn<Row>[] = [
  { header: 'id', value: (r) => r.id },
  { header: 'text, "quoted"', value: (r) => r.text },
  { header: 'n', value: (r) => r.n },
]

/** A page source over an array, counting the calls (every page is asked for in turn). */
function pagesOf<T>(rows: T[]) {
  const calls: { offset: number; limit: number }[] = []
  const source = (offset: number, limit: number) => {
    calls.push({ offset, limit })
    return Promise.resolve(rows.slice(offset, offset + limit))
  }
  return { source, calls }
}

describe('CSV export', () => {
  it('round-trips any text through an independent RFC 4180 parser, every page included', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(
          fc.record({
            id: fc.string({ minLength: 1, maxLength: 8 }),
            text: fc.oneof(fc.string(), fc.constantFrom('=SUM(A1)', '+1', '-2', '@cmd', 'a,b', 'say "hi"', 'two\r\nlines', 'lf\nonly', '\ttab', '')),
            n: fc.option(fc.integer({ min: -1e6, max: 1e6 }), { nil: null }),
          }),
          { maxLength: 40 },
        ),
        fc.integer({ min: 1, max: 7 }),
        async (rows, pageSize) => {
          const { source, calls } = pagesOf(rows)
          const { parts, rows: n } = await collectExport({ columns }, 'csv', source, { pageSize })
          const text = parts.join('')
          expect(n).toBe(rows.length)
          // every record ends in CRLF
          expect(text.endsWith('\r\n')).toBe(true)
          const parsed = parseCsv(text)
          expect(parsed[0]).toEqual(['id', 'text, "quoted"', 'n'])
          expect(parsed.slice(1)).toEqual(rows.map((r) => [guarded(r.id), guarded(r.text), r.n === null ? '' : String(r.n)]))
          // pages were requested in order until a short one
          expect(calls.map((c) => c.offset)).toEqual(Array.from({ length: Math.floor(rows.length / pageSize) + 1 }, (_, i) => i * pageSize))
        },
      ),
      { numRuns: 200 },
    )
  })

  it('quotes exactly the fields RFC 4180 requires and guards formulas', () => {
    expect(csvField('plain')).toBe('plain')
    expect(csvField('a,b')).toBe('"a,b"')
    expect(csvField('say "hi"')).toBe('"say ""hi"""')
    expect(csvField('x\r\ny')).toBe('"x\r\ny"')
    expect(csvField('=HYPERLINK("http://x")')).toBe(`"'=HYPERLINK(""http://x"")"`)
    expect(csvField('-1')).toBe("'-1")
    // numbers stay numbers: a negative score is not a formula
    expect(csvField(-0.25)).toBe('-0.25')
    expect(csvField(null)).toBe('')
    expect(csvField(['m1', 'm2'])).toBe('m1; m2')
  })

  it('streams a view larger than one page (2,503 rows in pages of 1,000)', async () => {
    const rows: Row[] = Array.from({ length: 2503 }, (_, i) => ({ id: `m${i}`, text: i % 7 === 0 ? `=${i}` : `text ${i}, with comma`, n: i }))
    const { source, calls } = pagesOf(rows)
    const progress: number[] = []
    const { parts } = await collectExport({ columns }, 'csv', source, { onProgress: (n) => progress.push(n) })
    expect(calls).toHaveLength(3)
    expect(progress).toEqual([1000, 2000, 2503])
    const parsed = parseCsv(parts.join(''))
    expect(parsed).toHaveLength(2504)
    expect(parsed[2503]).toEqual(['m2502', 'text 2502, with comma', '2502'])
    expect(parsed[1 + 14]).toEqual(['m14', "'=14", '14'])
  })

  it('stops when cancelled', async () => {
    const ctl = new AbortController()
    ctl.abort()
    await expect(collectExport({ columns }, 'csv', pagesOf<Row>([]).source, { signal: ctl.signal })).rejects.toBeInstanceOf(ExportCancelledError)
  })
})

describe('JSONL export', () => {
  it('writes one object per line that parses back to the row', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(
          fc.record({ id: fc.string({ maxLength: 6 }), text: fc.string(), n: fc.option(fc.double({ noNaN: true, noDefaultInfinity: true }), { nil: null }) }),
          {
            maxLength: 30,
          },
        ),
        async (rows) => {
          const { parts } = await collectExport({ columns, toJson: (r) => r }, 'jsonl', pagesOf(rows).source, { pageSize: 4 })
          const lines = parts.join('').split('\n')
          expect(lines.pop()).toBe('')
          expect(lines.map((l) => JSON.parse(l) as unknown)).toEqual(rows.map((r) => ({ ...r, n: Object.is(r.n, -0) ? 0 : r.n })))
        },
      ),
    )
  })

  it('defaults to the columns as keys', async () => {
    const { parts } = await collectExport({ columns }, 'jsonl', pagesOf<Row>([{ id: 'a', text: '=x', n: null }]).source)
    // JSONL is data, not a spreadsheet: no formula guard
    expect(JSON.parse(parts.join(''))).toEqual({ id: 'a', 'text, "quoted"': '=x', n: null })
  })
})
