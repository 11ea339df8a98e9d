import { useCallback, useEffect, useMemo, useState } from 'react'
import type { OpenInfo } from '../../../shared/contract'
import { bridgeMode, call } from '../lib/api'
import { AppContext, type AppState, type Nav, type Route } from './context'
import { LibraryView } from '../features/library/LibraryView'
import { BrowseView } from '../features/browse/BrowseView'
import { RecallView } from '../features/recall/RecallView'
import { EmbedStatus } from './EmbedStatus'
import { JobsIndicator } from './Jobs'
import { CompareView } from '../features/compare/CompareView'
import { EvalView } from '../features/eval/EvalView'
import { TraceView } from '../features/trace/TraceView'

const ROUTES: { route: Route; label: string; needsDb: boolean }[] = [
  { route: 'library', label: 'Library', needsDb: false },
  { route: 'browse', label: 'Memories', needsDb: true },
  { route: 'recall', label: 'Recall', needsDb: true },
  { route: 'compare', label: 'Compare', needsDb: true },
  { route: 'eval', label: 'Evaluate', needsDb: true },
  { route: 'trace', label: 'Decision trace', needsDb: true },
]

export function App() {
  const [db, setDbState] = useState<OpenInfo | null>(null)
  const [dbVersion, setDbVersion] = useState(0)
  const [nav, setNav] = useState<Nav>({ route: 'library', params: {} })
  const [booted, setBooted] = useState(false)
  const [bootError, setBootError] = useState<string | null>(null)

  const setDb = useCallback((next: OpenInfo | null) => {
    setDbState(next)
    setDbVersion((v) => v + 1)
  }, [])
  const navigate = useCallback((route: Route, params: Nav['params'] = {}) => setNav({ route, params }), [])

  // On start: whatever main already opened (argv path or the demo) is shown in the browser.
  useEffect(() => {
    call('app.info', {}).then(
      (info) => {
        if (info.current) {
          setDb(info.current)
          setNav({ route: 'browse', params: {} })
        }
        setBooted(true)
      },
      (e: Error) => {
        setBootError(e.message)
        setBooted(true)
      },
    )
  }, [setDb])

  const state: AppState = useMemo(() => ({ db, setDb, nav, navigate, dbVersion }), [db, setDb, nav, navigate, dbVersion])

  return (
    <AppContext.Provider value={state}>
      <div className="shell">
        <header className="topbar">
          <div className="brand">
            recall<span>scope</span>
          </div>
          {db ? (
            <>
              <span className="dbname" title={db.path}>
                {db.path}
              </span>
              {db.readOnly ? (
                <span className="badge ok" title="The agent DB is opened read-only: nothing you do here changes it">
                  read-only
                </span>
              ) : (
                <span className="badge danger" title="Write mode: refresh-on-recall writes last_used_at to the agent DB">
                  write mode
                </span>
              )}
              <span className="badge" title={db.detectedBecause}>
                {db.layout}
              </span>
            </>
          ) : (
            <span className="muted">no database open</span>
          )}
          <div className="spacer" />
          <JobsIndicator />
          <EmbedStatus dbVersion={dbVersion} />
          <span className="badge" title={bridgeMode === 'browser' ? 'Browser mode: the app talks to a loopback server' : 'Electron app'}>
            {bridgeMode === 'browser' ? 'browser mode' : 'desktop'}
          </span>
        </header>
        <nav className="nav" aria-label="Sections">
          {ROUTES.map((r) => (
            <button key={r.route} aria-current={nav.route === r.route ? 'page' : undefined} disabled={r.needsDb && !db} onClick={() => navigate(r.route)}>
              {r.label}
            </button>
          ))}
          {!db && <div className="navhint">Open a database to browse it.</div>}
        </nav>
        <main className="main">
          {bootError && <div className="page"><div className="error">Cannot reach recallscope's main process: {bootError}</div></div>}
          {!bootError && booted && nav.route === 'library' && <LibraryView />}
          {!bootError && booted && nav.route === 'browse' && db && <BrowseView key={`${dbVersion}:${nav.params.memoryId ?? ''}`} />}
          {!bootError && booted && nav.route === 'trace' && db && <TraceView key={`${dbVersion}:${nav.params.eventId ?? ''}:${nav.params.memoryId ?? ''}:${nav.params.query ?? ''}`} />}
          {!bootError && booted && nav.route === 'recall' && db && <RecallView key={dbVersion} />}
          {!bootError && booted && nav.route === 'compare' && db && <CompareView key={dbVersion} />}
          {!bootError && booted && nav.route === 'eval' && db && <EvalView key={dbVersion} />}
        </main>
      </div>
    </AppContext.Provider>
  )
}
