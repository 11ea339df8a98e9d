/**
 * Every channel's handler, by domain. The `satisfies` makes a missing channel a type error.
 */
import type { App } from '../app'
import type { Handlers } from '../register'
import { browseHandlers } from './browse'
import { embedHandlers } from './embed'
import { recallHandlers } from './recall'

export function createHandlers(app: App): Handlers {
  return {
    ...browseHandlers(app),
    ...embedHandlers(app),
    ...recallHandlers(app),
  } satisfies Handlers
}
