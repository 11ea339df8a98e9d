import { Component, lazy, Suspense, useCallback, useEffect, useMemo, useState, type ComponentType, type ReactNode } from 'react'
import type { OpenInfo } from '../../../shared/contract'
import { bridgeMode, call } from '../lib/api'
import { AppContext, type AppState, type Nav, type Route } from './context'
import { LibraryView } from '../features/library/LibraryView'
import { EmbedStatus } from './EmbedStatus'
import { JobsIndicator } from './Jobs'

/** A view's chunk could not be fetched (e.g. the browser-mode server was stopped). */
class ViewLoadError extends Error {
  override name = 'ViewLoadError'
  readonly code = 'VIEW_LOAD_FAILED'
}

/** React.lazy for a named export, with a failed chunk fetch tagged as ViewLoadError. */
function lazyView<M>(load: () => Promise<M>, pick: (m: M) => ComponentType) {
  return lazy(() =>
    load().then(
      (m) => ({ default: pick(m) }),
      (e: unknown) => {
        throw new ViewLoadError(e instanceof Error ? e.message : String(e))
      },
    ),
  )
}

// The Library (the first screen) is in the entry chunk; every view behind an
// open DB is its own chunk, loaded on first visit, so the table, chart
// (recharts) and eval/trace code is not parsed before it is needed.
const BrowseView = lazyView(
  () => import('../features/browse/BrowseView'),
  (m) => m.BrowseView,
)
const RecallView = lazyView(
  () => import('../features/recall/RecallView'),
  (m) => m.RecallView,
)
const CompareView = lazyView(
  () => import('../features/compare/CompareView'),
  (m) => m.CompareView,
)
const EvalView = lazyView(
  () => import('../features/eval/EvalView'),
  (m) => m.EvalView,
)
const TraceView = lazyView(
  () => import('../features/trace/TraceView'),
  (m) => m.TraceView,
)
const MapView = lazyView(
  () => import('../features/map/MapView'),
  (m) => m.MapView,
)

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
 * A view whose chunk failed to load says so instead of unmounting the whole
 * app. Only load failures: any other error goes on up, as before lazy loading.
 * React.lazy remembers the failure, so the way out is a reload.
 */
class ViewLoadBoundary extends Component<{ children: ReactNode }, { error: Error | null }> {
  override state: { error: Error | null } = { error: null }
  static getDerivedStateFromError(error: Error) {
    return { error }
  }
  override render() {
    const { error } = this.state
    if (!error) return this.props.children
    if (!(error instanceof ViewLoadError)) throw error
    return (
      <div className="page">
        <div className="error">Could not load this view ({error.message}). Reload the page to retry.</div>
      </div>
    )
  }
}

const ROUTES: { route: Route; label: string; needsDb: boolean }[] = [
  { route: 'library', label: 'Library', needsDb: false },
  { route: 'browse', label: 'Memories', needsDb: true },
  { route: 'recall', label: 'Recall', needsDb: true },
  { route: 'compare', label: 'Compare', needsDb: true },
  { route: 'eval', label: 'Evaluate', needsDb: true },
  { route: 'trace', label: 'Decision trace', needsDb: true },
  { route: 'map', label: 'Map', needsDb: true },
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
          {bootError && (
            <div className="page">
              <div className="error">Cannot reach recallscope's main process: {bootError}</div>
            </div>
          )}
          {!bootError && booted && nav.route === 'library' && <LibraryView />}
          <ViewLoadBoundary key={nav.route}>
            <Suspense fallback={<ViewLoading />}>
              {!bootError && booted && nav.route === 'browse' && db && <BrowseView key={`${dbVersion}:${nav.params.memoryId ?? ''}`} />}
              {!bootError && booted && nav.route === 'trace' && db && (
                <TraceView key={`${dbVersion}:${nav.params.eventId ?? ''}:${nav.params.memoryId ?? ''}:${nav.params.query ?? ''}`} />
              )}
              {!bootError && booted && nav.route === 'recall' && db && <RecallView key={dbVersion} />}
              {!bootError && booted && nav.route === 'compare' && db && <CompareView key={dbVersion} />}
              {!bootError && booted && nav.route === 'eval' && db && <EvalView key={dbVersion} />}
              {!bootError && booted && nav.route === 'map' && db && <MapView key={`${dbVersion}:${nav.params.query ?? ''}:${nav.params.caseId ?? ''}`} />}
            </Suspense>
          </ViewLoadBoundary>
        </main>
      </div>
    </AppContext.Provider>
  )
}
