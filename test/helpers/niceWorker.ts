/**
 * A vitest setup file (the dom project's, vitest.config.mts): lowers the priority of the test process's main
 * thread, where jsdom and React run, to niceness 19. The dom files run beside storeHost.test.ts, whose latency
 * assertions must measure the app rather than its neighbours; niced, the dom worker loses a contended core to it,
 * as `npm test`'s niced static checks do (docs/internals/testing.md "stop 34: the run's order").
 */
import os from 'node:os'

try {
  // the calling thread (Linux sets niceness per thread); a no-op once it is 19
  os.setPriority(19)
} catch {
  // not allowed here (some sandboxes): the files still run, only unniced
}
