/** The demo DBs e2e globalSetup prebuilds (shared by globalSetup.ts and harness.ts, which must not import each other's setup code). */

/** The sizes the e2e files use; `default` is generateDemo's own default size. */
export const DEMO_SIZES = ['default', 600, 2000, 3000] as const

/** The file name of the prebuilt demo of `memories` memories in the fixtures folder. */
export function demoFileName(memories: (typeof DEMO_SIZES)[number]): string {
  return `demo-${memories}.db`
}

/** Written in the fixtures folder by generateDemos.ts once every demo DB is there. */
export const DEMOS_READY = 'ready'

/** Written instead of DEMOS_READY when generating failed: the error. */
export const DEMOS_FAILED = 'failed'
