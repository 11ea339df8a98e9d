/**
 * IPC wiring: every contract channel gets an `ipcMain.handle` that checks the
 * sender, then runs the same dispatcher as the HTTP bridge (input validated by
 * the contract's zod schema, outcome wrapped in a Result). Job progress is
 * pushed to the window. Electron objects are passed in (types only here), so
 * the runtime `electron` import stays in index/window/security.
 */
import type { BrowserWindow, IpcMain, IpcMainInvokeEvent } from 'electron'
import type { App } from './api/app'
import { CHANNELS, type Dispatch } from './api/register'
import { JOB_PROGRESS_CHANNEL } from '../shared/jobs'
import { err } from '../shared/result'
import { isAppUrl } from './security'

/** Push channel for job progress (the preload listens on the same name). */
export const JOB_PROGRESS_EVENT = JOB_PROGRESS_CHANNEL

export interface IpcOptions {
  ipcMain: Pick<IpcMain, 'handle' | 'removeHandler'>
  app: App
  dispatch: Dispatch
  /** The window allowed to call; read at call time (the window may be re-created). */
  getWindow: () => BrowserWindow | null
  /** file:// URL of out/renderer/index.html. */
  appIndexUrl: string
}

/**
 * Electron checklist item 17: validate the sender of every IPC message. Only
 * our window's top frame showing our own page may call: not a sub-frame, not
 * another window, not the window after it somehow navigated elsewhere.
 */
export function isTrustedSender(event: IpcMainInvokeEvent, win: BrowserWindow | null, appIndexUrl: string): boolean {
  if (!win || win.isDestroyed()) return false
  if (event.sender !== win.webContents) return false
  const frame = event.senderFrame
  if (!frame || frame !== win.webContents.mainFrame) return false
  return isAppUrl(frame.url, appIndexUrl)
}

/** Register every channel; returns a function that removes them all again. */
export function registerIpc(opts: IpcOptions): () => void {
  for (const channel of CHANNELS) {
    opts.ipcMain.handle(channel, async (event, input: unknown) => {
      if (!isTrustedSender(event, opts.getWindow(), opts.appIndexUrl)) {
        return err('FORBIDDEN', `IPC from an untrusted frame refused (${channel})`)
      }
      return opts.dispatch(channel, input)
    })
  }
  const send = (stream: string, payload: unknown) => {
    const win = opts.getWindow()
    if (win && !win.isDestroyed() && !win.webContents.isDestroyed()) win.webContents.send(stream, payload)
  }
  const off = opts.app.jobs.onProgress((p) => send(JOB_PROGRESS_EVENT, p))
  // Events a store host relays (App.emitPush), on their own stream name; the preload listens to the ones it knows.
  const offPush = opts.app.onPush(send)
  return () => {
    off()
    offPush()
    for (const channel of CHANNELS) opts.ipcMain.removeHandler(channel)
  }
}
