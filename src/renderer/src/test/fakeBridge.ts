/**
 * A fake preload bridge for the renderer tests: `window.recallscope`, the object Electron's preload gives the page,
 * answering each channel from the test's function. The code under test goes through the real `lib/api` (its `call`
 * unwraps the Result and throws an ApiError with the code), as in the desktop app. Replaces `vi.mock('lib/api')`,
 * which a worker that runs several files in one module registry cannot honour (docs/internals/testing.md,
 * "Isolation"). Framework-free: the test removes it (`uninstall`) after each test or file.
 */
import type { RecallscopeApi } from '../../../shared/api'
import type { ErrorCode } from '../../../shared/result'

/** What a test's channel function returns (or resolves to); a throw (or rejection) becomes `{ ok: false }`. */
export type Answer = (channel: string, input: never) => unknown

/** One call the page made, in order. */
export interface BridgeCall {
  channel: string
  input: unknown
}

/** The installed fake: the calls it received, and how to take it away again. */
export interface FakeBridge {
  calls: BridgeCall[]
  uninstall: () => void
}

/**
 * Install a fake preload bridge that answers every channel with `answer(channel, input)`. An error thrown with a
 * `code` reaches the page with that code (`INTERNAL` without one). `onJobProgress` never fires.
 */
export function installFakeBridge(answer: Answer): FakeBridge {
  const calls: BridgeCall[] = []
  const api = new Proxy({} as RecallscopeApi, {
    get(_t, key) {
      if (key === 'onJobProgress') return () => () => undefined
      if (typeof key !== 'string') return undefined
      return async (input: unknown) => {
        calls.push({ channel: key, input })
        try {
          return { ok: true, data: await answer(key, input as never) }
        } catch (e) {
          const code = (e as { code?: ErrorCode }).code ?? 'INTERNAL'
          return { ok: false, error: { code, message: (e as Error).message } }
        }
      }
    },
  })
  window.recallscope = api
  return {
    calls,
    uninstall: () => {
      if (window.recallscope === api) delete window.recallscope
    },
  }
}
