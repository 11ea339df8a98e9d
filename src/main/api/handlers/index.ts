/**
 * Every channel's handler, by domain. The `satisfies` makes a missing channel a type error.
 */
import type { App } from '../app'
import type { Handlers } from '../register'
import { browseHandlers } from './browse'
import { configHandlers } from './configs'
import { embedHandlers } from './embed'
import { evalHandlers } from './eval'
import { jobHandlers } from './jobs'
import { postgresHandlers } from './postgres'
import { mappingHandlers } from './mapping'
import { mapHandlers } from './map'
import { recallHandlers } from './recall'
import { traceHandlers } from './trace'
import { traceLogHandlers } from './traceLogs'

export function createHandlers(app: App): Handlers {
  return {
    ...browseHandlers(app),
    ...configHandlers(app),
    ...embedHandlers(app),
    ...evalHandlers(app),
    ...jobHandlers(app),
    ...postgresHandlers(app),
    ...mappingHandlers(app),
    ...mapHandlers(app),
    ...recallHandlers(app),
    ...traceHandlers(app),
    ...traceLogHandlers(app),
  } satisfies Handlers
}
