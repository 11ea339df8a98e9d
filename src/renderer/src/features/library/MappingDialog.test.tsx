/**
 * The mapping dialog against a fake main (behind a fake preload bridge, test/fakeBridge.ts): pre-filled from the suggestion, every
 * select change asks for a new preview with the changed mapping, problems keep Open
 * disabled and are listed, Open sends the mapping shown. In Postgres mode every call
 * names the connection (never a path), the vector encodings are Postgres's, and
 * Open carries the connection and its "save as" name.
 */
import { afterEach, describe, expect, it, vi } from 'vitest'
import { fireEvent, render, screen, waitFor } from '@testing-library/react'
import type { Mapping, MappingPreview, TablesInfo } from '../../../../shared/mapping'
import { withFakeBridge } from '../../test/withFakeBridge'
import { MappingDialog } from './MappingDialog'

const TABLES: TablesInfo = {
  path: '/data/notes.sqlite',
  layout: null,
  format: 'sqlite',
  saved: null,
  tables: [
    {
      name: 'notes',
      kind: 'table',
      rows: 3,
      rowsCapped: false,
      shadow: false,
      columns: [
        { name: 'body', type: 'TEXT', seen: ['text'], constantLength: null },
        { name: 'ts', type: 'INTEGER', seen: ['integer'], constantLength: null },
        { name: 'emb', type: 'BLOB', seen: ['blob'], constantLength: 16 },
      ],
    },
  ],
}
const SUGGESTED: Mapping = { table: 'notes', columns: { content: 'body' }, vector: { column: 'emb', encoding: 'f32' } }
const T = Date.UTC(2026, 0, 2, 3, 4)

function previewOf(m: Mapping): MappingPreview {
  const created = m.columns.created === 'ts'
  const seconds = m.timeUnit === 'unix_s'
  return {
    rows: [
      {
        id: '1',
        content: 'first note',
        createdAt: created && !seconds ? T : null,
        lastUsedAt: null,
        role: null,
        kind: null,
        tier: 'long_term',
        sessionId: null,
        userId: null,
        agentId: null,
        salience: null,
        dim: 4,
        errors: seconds ? { created: '"ts" fall outside 1970–2200 as unix_s' } : {},
      },
    ],
    problems: seconds ? [{ field: 'created', column: 'ts', message: 'created: 1 of 1 sampled values of "ts" fall outside 1970–2200' }] : [],
    vector: { dim: 4, model: 'notes:4' },
  }
}

const PG_TABLES: TablesInfo = {
  path: 'postgres://agent@db.example:5432/mem?schema=odd',
  layout: null,
  format: 'postgres',
  saved: null,
  tables: [
    {
      name: 'Agent Notes',
      kind: 'table',
      rows: 40,
      rowsCapped: false,
      shadow: false,
      columns: [
        { name: 'Body', type: 'text', seen: ['text'], constantLength: null },
        { name: 'whenMS', type: 'int8', seen: ['integer'], constantLength: null },
        { name: 'Emb', type: 'vector', seen: ['vector'], constantLength: 8 },
        { name: 'raw', type: 'bytea', seen: ['blob'], constantLength: 32 },
      ],
    },
  ],
}
const PG_SUGGESTED: Mapping = { table: 'Agent Notes', columns: { content: 'Body' }, vector: { column: 'Emb', encoding: 'pgvector' } }

/** main's answers, per channel */
const main = vi.fn(async (channel: string, input: { mapping?: Mapping; pg?: unknown }) => {
  if (input.pg) {
    if (channel === 'store.tables') return PG_TABLES
    if (channel === 'store.suggestMapping') return PG_SUGGESTED
    if (channel === 'store.previewMapping') return { ...previewOf(input.mapping!), vector: { dim: 8, model: 'agent-notes:8' } }
    if (channel === 'store.openMapped')
      return { path: PG_TABLES.path, layout: 'mapped', readOnly: true, workspacePath: 'w', memories: 40, sessions: 0, tookMs: 1 }
  }
  if (channel === 'store.tables') return TABLES
  if (channel === 'store.suggestMapping') return SUGGESTED
  if (channel === 'store.previewMapping') return previewOf(input.mapping!)
  if (channel === 'store.openMapped') return { path: TABLES.path, layout: 'mapped', readOnly: true, workspacePath: 'w', memories: 3, sessions: 0, tookMs: 1 }
  throw new Error(`unexpected ${channel}`)
})
withFakeBridge(main)
afterEach(() => {
  main.mockClear()
})

const previews = () => main.mock.calls.filter(([c]) => c === 'store.previewMapping').map(([, i]) => i.mapping!)

describe('MappingDialog', () => {
  it('pre-fills from the suggestion; a select change re-previews with the changed mapping; problems block Open', async () => {
    const onOpened = vi.fn()
    render(<MappingDialog source={{ path: TABLES.path }} onOpened={onOpened} onClose={() => undefined} />)
    await waitFor(() => expect(screen.getByLabelText<HTMLSelectElement>('Column for content').value).toBe('body'))
    expect(screen.getByLabelText<HTMLSelectElement>('Column for vector').value).toBe('emb')
    await screen.findByText('first note')
    expect(previews()[0]).toEqual(SUGGESTED)

    fireEvent.change(screen.getByLabelText('Column for created'), { target: { value: 'ts' } })
    await screen.findByText('2026-01-02 03:04')
    expect(previews().at(-1)).toEqual({ ...SUGGESTED, columns: { content: 'body', created: 'ts' } })

    fireEvent.change(screen.getByLabelText('Time unit'), { target: { value: 'unix_s' } })
    await screen.findByText(/1 of 1 sampled values of "ts"/)
    expect(screen.getByRole<HTMLButtonElement>('button', { name: 'Open' }).disabled).toBe(true)

    fireEvent.change(screen.getByLabelText('Time unit'), { target: { value: 'unix_ms' } })
    await waitFor(() => expect(screen.getByRole<HTMLButtonElement>('button', { name: 'Open' }).disabled).toBe(false))
    fireEvent.click(screen.getByRole('button', { name: 'Open' }))
    await waitFor(() => expect(onOpened).toHaveBeenCalledTimes(1))
    const opened = main.mock.calls.find(([c]) => c === 'store.openMapped')![1]
    expect(opened).toEqual({ path: TABLES.path, mapping: { ...SUGGESTED, columns: { content: 'body', created: 'ts' }, timeUnit: 'unix_ms' } })
  })

  it('is a modal dialog: focus moves into it and Escape closes it', async () => {
    const onClose = vi.fn()
    render(<MappingDialog source={{ path: TABLES.path }} onOpened={() => undefined} onClose={onClose} />)
    const dialog = screen.getByRole('dialog', { name: 'Open a table by mapping' })
    expect(dialog.contains(document.activeElement)).toBe(true)
    fireEvent.keyDown(document.activeElement!, { key: 'Escape' })
    expect(onClose).toHaveBeenCalledTimes(1)
    await screen.findByText('first note') // let the pending preview settle before cleanup
  })

  it('Postgres mode: every call names the connection, the encodings are pgvector / bytea, Open sends the connection and its save-as name', async () => {
    const onOpened = vi.fn()
    const pg = { savedId: 'c0ffee' }
    render(<MappingDialog source={{ pg, label: 'postgres://agent@db.example/mem', saveAs: 'mem db' }} onOpened={onOpened} onClose={() => undefined} />)
    await waitFor(() => expect(screen.getByLabelText<HTMLSelectElement>('Column for content').value).toBe('Body'))
    // The URL main answered with (no password) replaces the label; the text speaks of a server, not a file.
    await screen.findByText(PG_TABLES.path)
    expect(screen.getByRole('dialog').textContent).toContain('the server is only read')
    expect(screen.getByLabelText<HTMLSelectElement>('Column for id').options[0].textContent).toBe('— row position (ctid) —')
    const enc = screen.getByLabelText<HTMLSelectElement>('Vector encoding')
    expect(enc.value).toBe('pgvector')
    expect([...enc.options].map((o) => o.value)).toEqual(['pgvector', 'f32'])
    await screen.findByText('first note')
    // Choosing the bytea column guesses float32; a vector column guesses pgvector again.
    fireEvent.change(screen.getByLabelText('Column for vector'), { target: { value: 'raw' } })
    await waitFor(() => expect(previews().at(-1)!.vector).toEqual({ column: 'raw', encoding: 'f32' }))
    fireEvent.change(screen.getByLabelText('Column for vector'), { target: { value: 'Emb' } })
    fireEvent.change(screen.getByLabelText('Column for created'), { target: { value: 'whenMS' } })
    fireEvent.change(screen.getByLabelText('Time unit'), { target: { value: 'unix_ms' } })
    const want: Mapping = { ...PG_SUGGESTED, columns: { content: 'Body', created: 'whenMS' }, timeUnit: 'unix_ms' }
    await waitFor(() => expect(previews().at(-1)).toEqual(want))
    await waitFor(() => expect(screen.getByRole<HTMLButtonElement>('button', { name: 'Open' }).disabled).toBe(false))
    fireEvent.click(screen.getByRole('button', { name: 'Open' }))
    await waitFor(() => expect(onOpened).toHaveBeenCalledTimes(1))
    for (const [, input] of main.mock.calls) {
      expect(input.pg).toEqual(pg)
      expect(input).not.toHaveProperty('path')
    }
    expect(main.mock.calls.find(([c]) => c === 'store.openMapped')![1]).toEqual({ pg, mapping: want, saveAs: 'mem db' })
  })
})
