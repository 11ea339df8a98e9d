import { createContext, useContext } from 'react'
import type { OpenInfo } from '../../../shared/contract'

export type Route = 'library' | 'browse' | 'recall' | 'compare' | 'eval' | 'trace' | 'map'

export interface Nav {
  route: Route
  /** route-specific parameters, e.g. { memoryId } for browse, { eventId } for trace */
  params: Record<string, string | undefined>
}

export interface AppState {
  db: OpenInfo | null
  setDb: (db: OpenInfo | null) => void
  nav: Nav
  /** go to a screen (a new history entry; the screen starts fresh from `params`) */
  navigate: (route: Route, params?: Nav['params']) => void
  /**
   * Record the current screen's state in the URL without restarting it (the view
   * already shows it): a selection is a new history entry (`push`, the default),
   * an edit such as typing is written in place (`replace`). undefined removes a key.
   */
  setParams: (patch: Nav['params'], mode?: 'push' | 'replace') => void
  /** bumps when the DB changes, so views reload */
  dbVersion: number
}

export const AppContext = createContext<AppState | null>(null)

export function useApp(): AppState {
  const ctx = useContext(AppContext)
  if (!ctx) throw new Error('useApp outside <AppContext.Provider>')
  return ctx
}

/** The app state when inside the provider, else null (components also used standalone, e.g. in tests). */
export function useOptionalApp(): AppState | null {
  return useContext(AppContext)
}
