import { Component, lazy, Suspense, useCallback, useEffect, useMemo, useRef, useState, type ComponentType, type ReactNode } from 'react'
import type { OpenInfo } from '../../../shared/contract'
import { getBridgeMode, call, isTokenError } from '../lib/api'
import { SnapshotBadge } from './SnapshotNote'
import { formatHash, installHistoryKeys, listenLocation, readLocation, writeLocation, type Location, type RouteParams } from '../lib/router'
import { AppContext, type AppState, type Nav, type Route } from './context'
import { usePanes } from './panes'
import { EmbedStatus } from './EmbedStatus'
import { JobsIndicator } from './Jobs'
import { forgetRecallSettings } from '../lib/recallSettings'

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

// Every view is its own chunk, loaded on first visit, so the table, chart
// (recharts), eval/trace and schema (zod) code is not parsed before it is
// needed. The Library too: it is the first screen only while no DB is open
// (its chunk is then fetched right after the entry's), and with one open the
// Memories screen no longer parses the Library's connect and mapping forms
// (docs/guide/workbench.md, "First paint and bundle sizes").
const LibraryView = lazyView(
  () => import('../features/library/LibraryView'),
  (m) => m.LibraryView,
)
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

const isRoute = (r: string): r is Route => ROUTES.some((x) => x.route === r)

/** Each screen's last parameters in this tab, so its nav item reopens it as it was left (sessionStorage: a reload keeps them). */
const LAST_KEY = 'recallscope.lastParams'
const LAST_DB_KEY = 'recallscope.lastParamsDb'
function readLastParams(): Partial<Record<Route, RouteParams>> {
  try {
    const v = JSON.parse(sessionStorage.getItem(LAST_KEY) ?? '{}') as unknown
    return v && typeof v === 'object' ? v : {}
  } catch {
    return {}
  }
}

/** The message for a page that could not reach main: a missing or stale token gets one plain instruction. */
function bootMessage(e: Error): string {
  if (isTokenError(e))
    return 'This page has no valid access token for the running recallscope server (a server started again gets a new one). Open the link that `recallscope serve` (or `npm start`) printed in its terminal: it ends with #token=….'
  return `Cannot reach recallscope's main process: ${e.message}`
}

/** "Copy link": the address of this screen and its state; in browser mode it opens the same state in another tab of this browser. */
function CopyLink() {
  const [copied, setCopied] = useState<'ok' | 'failed' | null>(null)
  useEffect(() => {
    if (!copied) return
    const t = setTimeout(() => setCopied(null), 2000)
    return () => clearTimeout(t)
  }, [copied])
  return (
    <button
      className="btn small"
      title="Copy the address of this screen with its state (filters, selection, settings): it opens the same view in another tab of this browser"
      onClick={() => {
        navigator.clipboard.writeText(window.location.href).then(
          () => setCopied('ok'),
          () => setCopied('failed'),
        )
      }}
    >
      {copied === 'ok' ? 'Link copied' : copied === 'failed' ? 'Copy failed' : 'Copy link'}
    </button>
  )
}

/** The screen a URL names; an unknown or empty one is the Library. */
function toNav(loc: Location): Nav {
  return isRoute(loc.route) ? { route: loc.route, params: loc.params } : { route: 'library', params: {} }
}

export function App() {
  const [db, setDbState] = useState<OpenInfo | null>(null)
  const [dbVersion, setDbVersion] = useState(0)
  // The URL is where the user is: a reload or a shared link opens the same screen and selection.
  const [nav, setNav] = useState<Nav>(() => toNav(readLocation()))
  // Bumps when a screen must start over from its params (navigate, back/forward, an edited address), not when a
  // view records its own state with setParams.
  const [visit, setVisit] = useState(0)
  // The latest nav, for setParams called twice before a render (each patch builds on the one before).
  const navRef = useRef(nav)
  const lastParams = useRef(readLastParams())
  // the same, for rendering the nav links' addresses (the ref serves callbacks that run before a render)
  const [lastShown, setLastShown] = useState(readLastParams)
  const commit = useCallback((next: Nav, restart: boolean) => {
    navRef.current = next
    setNav(next)
    if (restart) setVisit((v) => v + 1)
    // the screen's state as last seen, for its nav item (the Library's `wanted` note is not state)
    if (next.route !== 'library') {
      lastParams.current = { ...lastParams.current, [next.route]: next.params }
      setLastShown(lastParams.current)
      try {
        sessionStorage.setItem(LAST_KEY, JSON.stringify(lastParams.current))
      } catch {
        /* storage full or disabled: nav items open screens fresh */
      }
    }
  }, [])
  const [booted, setBooted] = useState(false)
  const [bootError, setBootError] = useState<string | null>(null)
  const panes = usePanes()

  const setDb = useCallback((next: OpenInfo | null) => {
    setDbState(next)
    setDbVersion((v) => v + 1)
    // another DB: the screens' remembered selections and filters belong to the one before (a reload keeps them)
    const path = next?.path ?? ''
    if (sessionStorage.getItem(LAST_DB_KEY) !== path) {
      lastParams.current = {}
      setLastShown({})
      sessionStorage.removeItem(LAST_KEY)
      forgetRecallSettings()
      sessionStorage.setItem(LAST_DB_KEY, path)
    }
  }, [])
  const navigate = useCallback(
    (route: Route, params: Nav['params'] = {}) => {
      const next = { route, params }
      writeLocation(next, 'push')
      commit(next, true)
    },
    [commit],
  )
  const setParams = useCallback(
    (patch: Nav['params'], mode: 'push' | 'replace' = 'push') => {
      const cur = navRef.current
      const next = { route: cur.route, params: { ...cur.params, ...patch } }
      if (writeLocation(next, mode)) commit(next, false)
    },
    [commit],
  )

  // Back/forward and a hand-edited address: the screen the URL names, started over from its params.
  useEffect(() => listenLocation((loc) => commit(toNav(loc), true)), [commit])
  useEffect(() => (getBridgeMode() === 'electron' ? installHistoryKeys() : undefined), [])

  // On start: whatever main already opened (argv path or the demo) is shown in the browser, on the screen the URL
  // names (a reload stays where it was), else the memories.
  useEffect(() => {
    call('app.info', {}).then(
      (info) => {
        const cur = navRef.current
        if (info.current) {
          setDb(info.current)
          if (cur.route === 'library' && readLocation().route === '') {
            const next: Nav = { route: 'browse', params: {} }
            writeLocation(next, 'replace')
            commit(next, false)
          } else if (cur.route !== 'library') {
            // the screen a page load (a copied link, a reload) lands on is remembered like one navigated to, so its
            // nav item brings it back as it was; after setDb, which forgets another DB's screens
            commit(cur, false)
          }
        } else if (ROUTES.find((r) => r.route === cur.route)?.needsDb) {
          // A link into a DB, but none is open: the Library, saying what the link wanted.
          const next: Nav = { route: 'library', params: { wanted: cur.route } }
          writeLocation(next, 'replace')
          commit(next, false)
        }
        setBooted(true)
      },
      (e: Error) => {
        setBootError(bootMessage(e))
        setBooted(true)
      },
    )
  }, [setDb, commit])

  const state: AppState = useMemo(() => ({ db, setDb, nav, navigate, setParams, dbVersion }), [db, setDb, nav, navigate, setParams, dbVersion])
  const viewKey = `${dbVersion}:${visit}`

  const browserMode = getBridgeMode() === 'browser'
  return (
    <AppContext.Provider value={state}>
      <div className={`shell${panes.narrow ? ' narrow' : ''}${panes.collapsed ? ' panes-collapsed' : ''}`}>
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
              {db.snapshot && <SnapshotBadge />}
            </>
          ) : bootError ? null : (
            <span className="muted">no database open</span>
          )}
          <div className="spacer" />
          <button
            className="btn small panes-toggle"
            aria-pressed={!panes.collapsed}
            onClick={panes.toggle}
            title={
              panes.collapsed ? 'Show the side panes beside the main column' : 'Fold the side panes into drawers at the edge (more room for the main column)'
            }
          >
            {panes.collapsed ? 'Side panes: folded' : 'Side panes: shown'}
          </button>
          {browserMode && <CopyLink />}
          <JobsIndicator />
          {!bootError && <EmbedStatus dbVersion={dbVersion} />}
          <span className="badge" title={browserMode ? 'Browser mode: the app talks to a loopback server' : 'Electron app'}>
            {browserMode ? 'browser mode' : 'desktop'}
          </span>
        </header>
        <nav className="nav" aria-label="Sections">
          {ROUTES.map((r) => {
            const enabled = !(r.needsDb && !db)
            const here = nav.route === r.route
            // The item of the screen you are on starts it over; another reopens that screen as you left it.
            const params = here ? {} : (lastShown[r.route] ?? {})
            // A real link: open in a new tab (middle-click, Ctrl/⌘-click, the context menu) works; a plain click
            // navigates in place without reloading the page.
            return enabled ? (
              <a
                key={r.route}
                href={formatHash(r.route, params)}
                aria-current={here ? 'page' : undefined}
                onClick={(e) => {
                  if (e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return
                  e.preventDefault()
                  navigate(r.route, params)
                }}
                title={here ? `${r.label}: start over` : `${r.label}, as you left it`}
              >
                {r.label}
              </a>
            ) : (
              <span key={r.route} className="nav-off" aria-disabled="true" title={`${r.label}: open a database first`}>
                {r.label}
              </span>
            )
          })}
          {!db && !bootError && (
            <div className="navhint" role={nav.params.wanted ? 'status' : undefined}>
              {nav.params.wanted ? `The link opens ${nav.params.wanted}: open a database first.` : 'Open a database to browse it.'}
            </div>
          )}
        </nav>
        <main className="main">
          {bootError && (
            <div className="page">
              <div className="error">{bootError}</div>
            </div>
          )}
          <ViewLoadBoundary key={nav.route}>
            <Suspense fallback={<ViewLoading />}>
              {!bootError && booted && nav.route === 'library' && <LibraryView key={viewKey} />}
              {!bootError && booted && nav.route === 'browse' && db && <BrowseView key={viewKey} />}
              {!bootError && booted && nav.route === 'trace' && db && <TraceView key={viewKey} />}
              {!bootError && booted && nav.route === 'recall' && db && <RecallView key={viewKey} />}
              {!bootError && booted && nav.route === 'compare' && db && <CompareView key={viewKey} />}
              {!bootError && booted && nav.route === 'eval' && db && <EvalView key={viewKey} />}
              {!bootError && booted && nav.route === 'map' && db && <MapView key={viewKey} />}
            </Suspense>
          </ViewLoadBoundary>
        </main>
      </div>
    </AppContext.Provider>
  )
}
