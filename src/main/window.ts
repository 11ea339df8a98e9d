/**
 * The one app window. Its webPreferences are the security boundary between the
 * untrusted renderer (it displays agent memories verbatim) and main, which can
 * read and write files: isolated, sandboxed, no Node.
 */
import path from 'node:path'
import { BrowserWindow, type BrowserWindowConstructorOptions, type WebPreferences } from 'electron'
import { appRoot, rendererDir } from './paths'
import { fileUrl } from './security'

/** What `npm run build` (electron-vite) produces and the window loads. */
export function shellFiles(): { preload: string; indexHtml: string; indexUrl: string } {
  const indexHtml = path.join(rendererDir(), 'index.html')
  return { preload: path.join(appRoot(), 'out', 'preload', 'index.js'), indexHtml, indexUrl: fileUrl(indexHtml) }
}

/** Secure webPreferences (Electron security checklist items 2–4, 6, 8). */
export function secureWebPreferences(preload: string): WebPreferences {
  return {
    preload,
    contextIsolation: true,
    sandbox: true,
    nodeIntegration: false,
    nodeIntegrationInWorker: false,
    nodeIntegrationInSubFrames: false,
    webSecurity: true,
    allowRunningInsecureContent: false,
    experimentalFeatures: false,
    webviewTag: false,
    navigateOnDragDrop: false,
    spellcheck: false,
  }
}

function windowOptions(preload: string): BrowserWindowConstructorOptions {
  return {
    width: 1400,
    height: 900,
    minWidth: 900,
    minHeight: 600,
    title: 'recallscope',
    // Shown on ready-to-show: no white flash, no half-drawn window.
    show: false,
    autoHideMenuBar: true,
    webPreferences: secureWebPreferences(preload),
  }
}

/** Create the window (not yet loaded: register IPC first, then call `loadApp`). */
export function createMainWindow(files = shellFiles()): BrowserWindow {
  const win = new BrowserWindow(windowOptions(files.preload))
  win.once('ready-to-show', () => win.show())
  return win
}

/** Load the built renderer from disk (file://, never a dev server or a remote URL). */
export function loadApp(win: BrowserWindow, files = shellFiles()): Promise<void> {
  return win.loadFile(files.indexHtml)
}
