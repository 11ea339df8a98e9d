import { Component, lazy, Suspense, useCallback, useEffect, useMemo, useState, type ReactNode } from 'react'
import type { OpenInfo } from '../../../shared/contract'
import { bridgeMode, call } from '../lib/api'
import { AppContext, type AppState, type Nav, type Route } from './context'
import { LibraryView } from '../features/library/LibraryView'
import { EmbedStatus } from './EmbedStatus'
import { JobsIndicator } from './Jobs'

// The Library (the first screen) is in the entry chunk; every view behind an
// open DB is its own chunk, loaded on first visit, so the table, chart
// (recharts) and eval/trace code is not parsed before it is needed.
const BrowseView = lazy(() => import('../features/browse/BrowseView').then((m) => ({ default: m.BrowseView })))
const RecallView = lazy(() => import('../features/recall/RecallView').then((m) => ({ default: m.RecallView })))
const CompareView = lazy(() => import('../features/compare/CompareView').then((m) => ({ default: m.CompareView })))
const EvalView = lazy(() => import('../features/eval/EvalView').then((m) => ({ default: m.EvalView })))
const TraceView = lazy(() => import('../features/trace/TraceView').then((m) => ({ default: m.TraceView })))

/** Shown while a view's chunk loads (a few ms over loopback or file://). */
function ViewLoading() {
  return (
    <div className="page">
      <div className="muted" role="status">
        Loading…
      </div>
    </div>
  )
}

/**
 * A view whose chunk failed to load (e.g. the browser-mode server was stopped)
 * shows why instead of unmounting the whole app; keyed by route, so moving to
 * another view retries.
 */
class ViewLoadBoundary extends Component<{ children: ReactNode }, { error: Error | null }> {
  override state: { error: Error | null } = { error: null }
  static getDerivedStateFromError(error: Error) {
    return { error }
  }
  override render() {
    if (this.state.error)
      return (
        <div className="page">
          <div className="error">Could not load this view: {this.state.error.message}</div>
        </div>
      )
    return this.props.children
  }
}

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
              <span className="badge">{db.layout}</span>
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
          <ViewLoadBoundary key={nav.route}>
            <Suspense fallback={<ViewLoading />}>
              {!bootError && booted && nav.route === 'browse' && db && <BrowseView key={`${dbVersion}:${nav.params.memoryId ?? ''}`} />}
              {!bootError && booted && nav.route === 'trace' && db && <TraceView key={`${dbVersion}:${nav.params.eventId ?? ''}:${nav.params.memoryId ?? ''}:${nav.params.query ?? ''}`} />}
              {!bootError && booted && nav.route === 'recall' && db && <RecallView key={dbVersion} />}
              {!bootError && booted && nav.route === 'compare' && db && <CompareView key={dbVersion} />}
              {!bootError && booted && nav.route === 'eval' && db && <EvalView key={dbVersion} />}
            </Suspense>
          </ViewLoadBoundary>
        </main>
      </div>
    </AppContext.Provider>
  )
}
