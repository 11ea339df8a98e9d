/**
 * A vitest setup file (the dom project's, vitest.config.mts): lowers the priority of the test process's main
 * thread, where jsdom and React run, to niceness 10. The dom files run beside storeHost.test.ts, whose latency
 * assertions must measure the app rather than its neighbours; niced, the dom worker loses a contended core to it,
 * as `npm test`'s niced static checks do. 10 is the checks' niceness (scripts/test.cjs): at 19 the dom worker lost
 * the other core to the checks as well and ran ~7× longer, which made the whole `npm test` slower
 * (docs/internals/testing.md "stop 34: the run's order").
 */
import os from 'node:os'

try {
  // the calling thread (Linux sets niceness per thread); a no-op once it is 10
  os.setPriority(10)
} catch {
  // not allowed here (some sandboxes): the files still run, only unniced
}
