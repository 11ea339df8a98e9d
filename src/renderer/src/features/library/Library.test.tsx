/**
 * The Library in the desktop app (issue 10, HIGH 3): files come from main's native dialogs,
 * never from a typed path, and the import's output is confirmed in the Save dialog first.
 * Also the read-only snapshot note (item 11), and "Map a table…" when a Postgres schema has no
 * known layout. The page talks to a fake Electron preload bridge (test/fakeBridge.ts).
 */
import { afterEach, describe, expect, it, vi } from 'vitest'
import { cleanup, fireEvent, render, screen, waitFor, within } from '@testing-library/react'
import type { OpenInfo } from '../../../../shared/contract'
import { LibraryView } from './LibraryView'
import { AppContext, type AppState } from '../../app/context'
import { SnapshotBadge } from '../../app/SnapshotNote'
import { withFakeBridge } from '../../test/withFakeBridge'

/** What the fake native dialog answers, in order. */
const dialogAnswers: (string | null)[] = []
const opened = (p: string, snapshot = false): OpenInfo => ({
  path: p,
  layout: 'canonical',
  readOnly: true,
  workspacePath: `${p}.recallscope`,
  ...(snapshot ? { snapshot: true } : {}),
  memories: 3,
  sessions: 1,
  tookMs: 1,
})

/** main's answers over the preload bridge */
function answer(channel: string, input: Record<string, unknown>): unknown {
  if (channel === 'store.pick') return { supported: true, path: dialogAnswers.shift() ?? null }
  if (channel === 'store.open') return input.write ? { ...opened(input.path as string), writeDeclined: true } : opened(input.path as string)
  if (channel === 'store.recent' || channel === 'jobs.list') return []
  if (channel === 'import.start') return { jobId: 'job-1', kind: 'import', label: 'Import', state: 'running', done: 0, total: 0, startedAt: 1, updatedAt: 1 }
  if (channel === 'store.facts') return new Promise(() => undefined) // the facts card stays loading
  if (channel === 'pg.saved') return [{ id: 's1', name: 'prod', url: 'postgres://agent@db.example/mem', password: 'keychain' }]
  if (channel === 'pg.connect') throw Object.assign(new Error('schema "public" holds no memory store recallscope knows'), { code: 'UNKNOWN_LAYOUT' })
  if (channel === 'store.tables') return new Promise(() => undefined) // the dialog stays loading
  throw new Error(`unexpected ${channel}`)
}

const bridge = withFakeBridge(answer)
afterEach(() => {
  dialogAnswers.length = 0
})

function renderLibrary(db: OpenInfo | null = null) {
  const state: AppState = { db, setDb: vi.fn(), nav: { route: 'library', params: {} }, navigate: vi.fn(), setParams: vi.fn(), dbVersion: 0 }
  render(
    <AppContext.Provider value={state}>
      <LibraryView />
    </AppContext.Provider>,
  )
  return state
}
const sent = (channel: string) => bridge.calls.filter((c) => c.channel === channel).map((c) => c.input)

describe('Library in the desktop app', () => {
  it('Browse… and Folder… open main’s dialogs; the chosen path is what store.open gets', async () => {
    const state = renderLibrary()
    expect(screen.getByTestId('dialog-note').textContent).toMatch(/system dialog/)
    dialogAnswers.push('/data/agent.db')
    fireEvent.click(screen.getByRole('button', { name: 'Browse…' }))
    await waitFor(() => expect(sent('store.open')).toEqual([{ path: '/data/agent.db', write: false }]))
    expect(sent('store.pick')).toEqual([{ purpose: 'db' }])
    expect(state.setDb).toHaveBeenCalledWith(opened('/data/agent.db'))
    // a cancelled folder dialog opens nothing
    dialogAnswers.push(null)
    fireEvent.click(screen.getByRole('button', { name: 'Folder…' }))
    await waitFor(() => expect(sent('store.pick')).toEqual([{ purpose: 'db' }, { purpose: 'dbFolder' }]))
    expect(sent('store.open')).toHaveLength(1)
  })

  it('write mode declined in main’s confirmation: stays on the Library and says it opened read-only', async () => {
    const state = renderLibrary()
    fireEvent.click(screen.getByRole('checkbox', { name: /write mode/ }))
    expect(screen.getByText(/confirm in a system dialog/)).toBeTruthy()
    dialogAnswers.push('/data/agent.db')
    fireEvent.click(screen.getByRole('button', { name: 'Browse…' }))
    await waitFor(() => expect(screen.getByTestId('mode-note').textContent).toMatch(/^Opened read-only: write mode was not allowed/))
    expect(sent('store.open')).toEqual([{ path: '/data/agent.db', write: true }])
    expect(state.setDb).toHaveBeenCalledWith(expect.objectContaining({ readOnly: true, writeDeclined: true }))
    expect(state.navigate).not.toHaveBeenCalled()
  })

  it('import: the input from the Open dialog, the output confirmed in the Save dialog (suggested name), then import.start', async () => {
    renderLibrary()
    const from = screen.getByLabelText<HTMLInputElement>('Import from')
    expect(from.readOnly).toBe(true) // no typed paths
    dialogAnswers.push('/data/mem.jsonl')
    fireEvent.click(screen.getByRole('button', { name: 'Choose…' }))
    await waitFor(() => expect(from.value).toBe('/data/mem.jsonl'))
    // Import without an output chosen: the Save dialog first, starting at the suggestion.
    dialogAnswers.push('/data/picked-out.db')
    fireEvent.click(screen.getByRole('button', { name: 'Import' }))
    await waitFor(() => expect(sent('import.start')).toHaveLength(1))
    expect(sent('store.pick')).toEqual([{ purpose: 'importIn' }, { purpose: 'importOut', defaultPath: '/data/mem.canonical.db' }])
    expect(sent('import.start')[0]).toMatchObject({ kind: 'jsonl', in: '/data/mem.jsonl', out: '/data/picked-out.db' })
  })

  it('a cancelled Save dialog starts no import', async () => {
    renderLibrary()
    dialogAnswers.push('/data/mem.jsonl', null)
    fireEvent.click(screen.getByRole('button', { name: 'Choose…' }))
    await waitFor(() => expect(screen.getByLabelText<HTMLInputElement>('Import from').value).toBe('/data/mem.jsonl'))
    fireEvent.click(screen.getByRole('button', { name: 'Import' }))
    await waitFor(() => expect(sent('store.pick')).toHaveLength(2))
    expect(sent('import.start')).toHaveLength(0)
  })
})

describe('read-only snapshot note', () => {
  it('the Library and the header say the view is a snapshot, only when it is one', () => {
    renderLibrary(opened('/ro/agent.db', true))
    expect(screen.getByTestId('snapshot-note').textContent).toBe(
      'Read-only snapshot: the folder is not writable, changes the agent makes now are not seen; reopen to refresh.',
    )
    render(<SnapshotBadge />)
    expect(screen.getByTestId('snapshot-badge').getAttribute('title')).toMatch(/^read-only snapshot: the folder is not writable/)
    cleanup()
    renderLibrary(opened('/rw/agent.db'))
    expect(screen.queryByTestId('snapshot-note')).toBeNull()
  })
})

describe('Map a table… (Postgres, desktop app)', () => {
  it('UNKNOWN_LAYOUT from Connect offers the mapping dialog over the same connection: the form fields, or the saved id', async () => {
    renderLibrary()
    const form = screen.getByRole('form', { name: 'Postgres connection' })
    fireEvent.change(screen.getByLabelText('Host'), { target: { value: 'db.example' } })
    fireEvent.change(screen.getByLabelText('Database'), { target: { value: 'mem' } })
    fireEvent.change(screen.getByLabelText('Password'), { target: { value: 'pw-typed' } })
    fireEvent.click(screen.getByRole('checkbox', { name: 'save as' }))
    fireEvent.change(screen.getByLabelText('Connection name'), { target: { value: 'mem db' } })
    fireEvent.submit(form)
    const map = await screen.findByRole('button', { name: 'Map a table…' })
    expect(screen.getByRole('alert').getAttribute('data-code')).toBe('UNKNOWN_LAYOUT')
    fireEvent.click(map)
    const dialog = await screen.findByRole('dialog', { name: 'Open a table by mapping' })
    const conn = { host: 'db.example', port: 5432, database: 'mem', password: 'pw-typed', sslmode: 'prefer' }
    await waitFor(() => expect(sent('store.tables')).toEqual([{ pg: { conn } }]))
    // Until main answers, the dialog names the connection without its password.
    expect(dialog.textContent).toContain('postgres://db.example:5432/mem')
    expect(dialog.textContent).not.toContain('pw-typed')
    fireEvent.click(screen.getByRole('button', { name: 'Cancel' }))
    expect(screen.queryByRole('dialog')).toBeNull()

    // A saved connection: the dialog is given its id (main decrypts the password), never a URL with one.
    const saved = await screen.findByRole('table', { name: 'Saved connections' })
    fireEvent.click(within(saved).getByRole('button', { name: 'Connect' }))
    await waitFor(() => expect(sent('pg.connect').at(-1)).toEqual({ savedId: 's1' }))
    fireEvent.click(await screen.findByRole('button', { name: 'Map a table…' }))
    await screen.findByRole('dialog', { name: 'Open a table by mapping' })
    await waitFor(() => expect(sent('store.tables').at(-1)).toEqual({ pg: { savedId: 's1' } }))
  })
})
