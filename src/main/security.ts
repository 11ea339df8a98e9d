/**
 * Electron hardening that is not a webPreference: the CSP header, navigation
 * and new-window guards, permission denial, no <webview>. Follows Electron's
 * security checklist (https://www.electronjs.org/docs/latest/tutorial/security):
 * the renderer shows data from agent databases, which we treat as hostile.
 */
import { app, session, type Session, type WebContents } from 'electron'
import { pathToFileURL } from 'node:url'
import { CONTENT_SECURITY_POLICY } from './csp'

/** The file:// URL of a local file, as Chromium reports it in events. */
export function fileUrl(file: string): string {
  return pathToFileURL(file).href
}

/**
 * True when `url` is the app's own page: the same file:// document, whatever
 * its hash or query (the renderer routes with the hash).
 */
export function isAppUrl(url: string, appIndexUrl: string): boolean {
  let a: URL
  let b: URL
  try {
    a = new URL(url)
    b = new URL(appIndexUrl)
  } catch {
    return false
  }
  return a.protocol === 'file:' && b.protocol === 'file:' && a.host === b.host && a.pathname === b.pathname
}

/**
 * Session-wide guards: every response gets our CSP header (the page's meta tag
 * says the same; the header also covers frame-ancestors, which a meta tag
 * cannot), and every permission request or check is refused: the app needs no
 * camera, notifications, clipboard-read, geolocation, HID, serial…
 */
export function hardenSession(ses: Session = session.defaultSession): void {
  ses.webRequest.onHeadersReceived((details, callback) => {
    const headers: Record<string, string[]> = {}
    for (const [k, v] of Object.entries(details.responseHeaders ?? {})) {
      // A response's own, possibly weaker, policy must not sit beside ours.
      if (k.toLowerCase() !== 'content-security-policy') headers[k] = v
    }
    headers['Content-Security-Policy'] = [CONTENT_SECURITY_POLICY]
    callback({ responseHeaders: headers })
  })
  ses.setPermissionRequestHandler((_wc, _permission, callback) => callback(false))
  ses.setPermissionCheckHandler(() => false)
}

/**
 * Guards on one WebContents: no new windows, no navigation away from the app's
 * page (a link in a memory's text must not turn the window into a web browser
 * holding the preload bridge), no <webview>.
 */
export function hardenWebContents(contents: WebContents, appIndexUrl: string): void {
  contents.setWindowOpenHandler(() => ({ action: 'deny' }))
  const guard = (event: { preventDefault(): void; url?: string }, legacyUrl?: string) => {
    const url = event.url ?? legacyUrl ?? ''
    if (!isAppUrl(url, appIndexUrl)) event.preventDefault()
  }
  contents.on('will-navigate', guard)
  contents.on('will-redirect', guard)
  // Sub-frames too (will-navigate only covers the main frame).
  contents.on('will-frame-navigate', guard)
  contents.on('will-attach-webview', (event) => event.preventDefault())
}

/**
 * Install every guard: the default session now, and each WebContents as it is
 * created (including any a bug might open), before it can load anything.
 */
export function installSecurity(appIndexUrl: string): void {
  hardenSession(session.defaultSession)
  app.on('web-contents-created', (_event, contents) => hardenWebContents(contents, appIndexUrl))
}
