/**
 * The mapping dialog against a mocked main: pre-filled from the suggestion, every
 * select change asks for a new preview with the changed mapping, problems keep Open
 * disabled and are listed, Open sends the mapping shown.
 */
import { afterEach, describe, expect, it, vi } from 'vitest'
import { cleanup, fireEvent, render, screen, waitFor } from '@testing-library/react'
import type { Mapping, MappingPreview, TablesInfo } from '../../../../shared/mapping'

const TABLES: TablesInfo = {
  path: '/data/notes.sqlite',
  layout: null,
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

const call = vi.fn(async (channel: string, input: { mapping?: Mapping }) => {
  if (channel === 'store.tables') return TABLES
  if (channel === 'store.suggestMapping') return SUGGESTED
  if (channel === 'store.previewMapping') return previewOf(input.mapping!)
  if (channel === 'store.openMapped') return { path: TABLES.path, layout: 'mapped', readOnly: true, workspacePath: 'w', memories: 3, sessions: 0, tookMs: 1 }
  throw new Error(`unexpected ${channel}`)
})
vi.mock('../../lib/api', () => ({ call: (c: string, i: { mapping?: Mapping }) => call(c, i) }))

import { MappingDialog } from './MappingDialog'

afterEach(() => {
  cleanup()
  call.mockClear()
})

const previews = () => call.mock.calls.filter(([c]) => c === 'store.previewMapping').map(([, i]) => i.mapping!)

describe('MappingDialog', () => {
  it('pre-fills from the suggestion; a select change re-previews with the changed mapping; problems block Open', async () => {
    const onOpened = vi.fn()
    render(<MappingDialog path={TABLES.path} onOpened={onOpened} onClose={() => undefined} />)
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
    const opened = call.mock.calls.find(([c]) => c === 'store.openMapped')![1]
    expect(opened).toEqual({ path: TABLES.path, mapping: { ...SUGGESTED, columns: { content: 'body', created: 'ts' }, timeUnit: 'unix_ms' } })
  })

  it('is a modal dialog: focus moves into it and Escape closes it', async () => {
    const onClose = vi.fn()
    render(<MappingDialog path={TABLES.path} onOpened={() => undefined} onClose={onClose} />)
    const dialog = screen.getByRole('dialog', { name: 'Open a table by mapping' })
    expect(dialog.contains(document.activeElement)).toBe(true)
    fireEvent.keyDown(document.activeElement!, { key: 'Escape' })
    expect(onClose).toHaveBeenCalledTimes(1)
    await screen.findByText('first note') // let the pending preview settle before cleanup
  })
})
