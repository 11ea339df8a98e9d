/**
 * What the trust tests' child processes load (test/trust3/plantedFiles.test.ts, test/trust3/twoProcesses.test.ts):
 * built once per run beside the worker scripts (test/helpers/testWorkers.ts), so each child requires one bundle
 * instead of compiling the store's modules through tsx (docs/internals/testing.md has the CPU measured).
 * `processLibPath()` (test/helpers/processLibPath.ts) says where the build is.
 */
export { App } from '../../src/main/api/app'
export { createHandlers } from '../../src/main/api/handlers'
export { createDispatcher } from '../../src/main/api/register'
export { openSource } from '../../src/main/store/registry'
