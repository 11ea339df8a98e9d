/**
 * The drag fast path's timing constants (dragFastPath.ts), apart so `bench ui` reads them without the renderer's
 * modules (docs/internals/performance.md, "Round 5: a held slider without React").
 */

/**
 * A drag held still this long sets React's state (the screen's other panels catch up). Longer than a frame apart
 * by far: a drag's moves come 16–100 ms apart, so within a drag it fires only when the hand stops.
 */
export const DRAG_REST_MS = 400

/** The user-timing mark made when the screen is rendered with a drag's state (a rest, or the release). */
export const SETTLE_MARK = 'recallscope:drag-settle'
