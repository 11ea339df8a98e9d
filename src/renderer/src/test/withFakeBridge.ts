/**
 * A fake preload bridge (fakeBridge.ts) around every test of the calling file: installed before each test; after
 * it, the rendered tree is unmounted (Testing Library's cleanup, first, so no effect of an unmounting screen finds the
 * bridge gone) and the bridge removed. Imports vitest, so for test files only (allowed in .oxlintrc.json and
 * .dependency-cruiser.cjs, as setup.ts is).
 */
import { afterEach, beforeEach } from 'vitest'
import { cleanup } from '@testing-library/react'
import { installFakeBridge, type Answer, type BridgeCall, type FakeBridge } from './fakeBridge'

/** The current test's bridge: the calls the page made to it, in order. */
export interface CurrentBridge {
  readonly calls: BridgeCall[]
}

/** Register the hooks; call once at the top of a test file (or a describe block). */
export function withFakeBridge(answer: Answer): CurrentBridge {
  let bridge: FakeBridge | null = null
  beforeEach(() => {
    bridge = installFakeBridge(answer)
  })
  afterEach(() => {
    cleanup()
    bridge?.uninstall()
    bridge = null
  })
  return {
    get calls() {
      if (!bridge) throw new Error('the fake bridge is installed only while a test runs')
      return bridge.calls
    },
  }
}
