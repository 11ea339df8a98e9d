/**
 * The Recall screen's drag fast path (docs/internals/performance.md, "Round 5: a held slider without React"). While a range slider of the
 * config panel is held (pointer down on it until pointer up, or an arrow key down until key up), each animation
 * frame's edit is applied without a React render: the candidates are re-ranked (`localView`, the function the
 * screen's render uses), and the rows, the summary numbers and the panel's other sliders are written by the same
 * writers a render calls after it (`ResultsListHandle.show`, `writeSummary`, the panel's followers). React's state
 * (the config, and with it the URL, the summary's other parts and the panels that depend on the ranking) is set
 * once, when the slider is let go, and whenever the drag rests for `DRAG_REST_MS`. Until then those panels (the
 * context block, the selected candidate's detail, the notices) keep what they showed, marked as pending
 * (`data-drag` on the screen, recall.css).
 */
import type { RecallConfig, RecallTrace } from '../../../../shared/types'
import { createQuietTimer } from '../../lib/quietTimer'
import type { ConfigFollowers, ConfigUpdate } from './ConfigPanel'
import { toRows, type ResultsListHandle, type Row } from './ResultsList'
import type { RankChange } from './baseline'
import { localView, RankTracker, type RecallView, type TrackerState } from './useRecall'
import { DRAG_REST_MS, SETTLE_MARK } from './dragTiming'

/** What a fast step needs from the screen as last rendered. */
export interface DragContext {
  /** false when an edit must go through React (no trace yet, a query on its way, the context-window tab shown) */
  enabled: boolean
  trace: RecallTrace | null
  config: RecallConfig
  selectedId: string | null
  /** the rank changes a view shows (it passes the view through the screen's rank tracker) */
  changesOf: (view: RecallView) => Map<string, RankChange>
  /** the screen's rank tracker */
  tracker: RankTracker
}

/** The screen as last rendered, connected after every render (`DragFastPath.connect`). */
export interface DragIo {
  context: DragContext
  list: ResultsListHandle | null
  followers: ConfigFollowers
  /** writes the summary numbers of a view (the writer the screen's render calls too) */
  writeSummary: (view: RecallView) => void
  /** the screen's root element (marked `data-drag` while it shows a state React has not rendered) */
  root: HTMLElement | null
  /** sets the config in React's state, rendered before it returns */
  commit: (config: RecallConfig) => void
  /** an edit through React (the path for every edit outside a held slider) */
  update: (u: ConfigUpdate) => void
}

/** Keys that step a range input. */
const STEP_KEYS = new Set(['ArrowLeft', 'ArrowRight', 'ArrowUp', 'ArrowDown', 'PageUp', 'PageDown', 'Home', 'End'])

export class DragFastPath {
  /** the range input held (null: none) */
  private held: HTMLInputElement | null = null
  /** the config shown without a render (null: the screen shows React's) */
  private shown: RecallConfig | null = null
  private readonly rest = createQuietTimer(DRAG_REST_MS)
  private io: DragIo | null = null
  /** the rows of the last step, written over by the next (toRows' pool): the list holds them only until then */
  private readonly rowPool: Row[] = []
  /** the screen's rank tracker as the last step left it */
  private tracked: TrackerState | null = null

  /**
   * The screen as it was just rendered (after every render). A render while a step is shown without one (set off by
   * something else: the URL written after an earlier edit, a query's answer) drew React's state, the one before the
   * drag, over the step's list and summary numbers, and told the rank tracker of it. The tracker is put back as the
   * step left it, and the step is shown again in a microtask (still before the paint, so no frame shows the older
   * state; outside this commit, where the list may render alone). React's state is left as it was: setting it here
   * would write the URL again 250 ms later, and that render would set it again, every quarter second of the drag.
   */
  connect(io: DragIo): void {
    this.io = io
    if (!this.shown) return
    if (this.tracked) io.context.tracker.restore(this.tracked)
    queueMicrotask(() => this.showAgain())
  }

  /** Shows the step shown last again (after a render drew over it); through React when it cannot be shown without. */
  private showAgain(): void {
    const { shown: c, io } = this
    if (!c || !io) return
    const { context: ctx, list } = io
    const view = ctx.enabled && ctx.trace && list ? localView(ctx.trace, c, true) : null
    if (!view || !list) return this.settle()
    this.showShown(io, list, view, c)
  }

  /** Shows a step of the drag (its view of `config`, made into the pool) and keeps the rank tracker as it leaves it. */
  private showShown(io: DragIo, list: ResultsListHandle, view: RecallView, config: RecallConfig): void {
    showStep(io, list, view, toRows(view.results, view.dropped, this.rowPool), config, io.context.changesOf(view))
    this.tracked = io.context.tracker.save()
  }

  /** A pointer or key went down: if on a range input, the drag begins. */
  begin(e: Event): void {
    const t = e.target as HTMLInputElement | null
    if (t?.tagName !== 'INPUT' || t.type !== 'range') return
    if (e instanceof KeyboardEvent && !STEP_KEYS.has(e.key)) return
    this.held = t
  }

  /**
   * Focus left an element: the drag ends if it left the slider held. Focus leaving another (the query field, when
   * the pointer goes down on a slider) leaves the drag held.
   */
  focusLeft(e: Event): void {
    if (e.target === this.held) this.release()
  }

  /** An edit of the config panel (one per frame): shown without a render while a slider is held, else through React. */
  apply(update: ConfigUpdate): void {
    const io = this.io
    if (!io) return
    const ctx = io.context
    const list = io.list
    const next = this.held !== null && ctx.enabled && ctx.trace && list ? update(this.shown ?? ctx.config) : null
    // Into the objects of the last step (rerank's `reuse`, toRows' pool): shown, then written over by the next step.
    const view = next && ctx.trace ? localView(ctx.trace, next, true) : null
    if (!next || !view || !list) {
      this.settle()
      // An updater of React's state, which holds the config shown since the settle.
      io.update(update)
      return
    }
    this.shown = next
    if (io.root && !io.root.hasAttribute('data-drag')) {
      io.root.setAttribute('data-drag', '')
      io.root.querySelector('.recall-right')?.setAttribute('aria-busy', 'true')
    }
    this.showShown(io, list, view, next)
    this.rest.poke(() => this.settle())
  }

  /** The slider was let go (pointer or key up, focus gone): React's state is set to what is shown. */
  release(): void {
    this.held = null
    this.settle()
  }

  /** Sets React's state to the config shown (the drag goes on, if held, from there). */
  private settle(): void {
    const c = this.shown
    if (!c || !this.io) return
    // Seen by `bench ui` (a user-timing mark in its trace): a render of the screen within a drag, not a step's own work.
    performance.mark(SETTLE_MARK)
    this.shown = null
    this.rest.cancel()
    this.io.root?.removeAttribute('data-drag')
    this.io.root?.querySelector('.recall-right')?.removeAttribute('aria-busy')
    this.io.commit(c)
  }

  /**
   * Runs a drag's steps with the screen's own state (idle time after a trace arrives): one step to a nudged config
   * and one back, then what is shown, as before. The first real step then runs code the JS engine has compiled
   * already, into objects made already (the re-rank's and the rows' for `reuse`, which the first step would make):
   * a step shown with the same values writes nothing, so the writers' paths for a changed rank, badge, score, bar,
   * text, summary number and slider ran cold on the first real step (~2.5 ms more script than a later one;
   * docs/internals/performance.md, "Round 6 (stop 34)"). The nudged steps' changes come from a tracker of their
   * own (the screen's is not told of them); all of it runs in one task, so no frame shows the nudged state.
   */
  warm(current: { view: RecallView; changes: Map<string, RankChange> }): void {
    const io = this.io
    if (!io || this.held || this.shown || !io.context.enabled || !io.context.trace || !io.list) return
    const { trace, config } = io.context
    const tracker = new RankTracker()
    for (const c of [nudged(config), config]) {
      const v = localView(trace, c, true, true)
      if (!v) break
      showStep(io, io.list, v, toRows(v.results, v.dropped, this.rowPool), c, tracker.changesFor(v))
    }
    showStep(io, io.list, current.view, toRows(current.view.results, current.view.dropped), config, current.changes)
  }

  /** The screen went away. */
  stop(): void {
    this.held = null
    this.shown = null
    this.rest.cancel()
  }
}

/** Shows a step without a render: the list's rows, the summary's numbers and the panel's other sliders (its followers). */
function showStep(io: DragIo, list: ResultsListHandle, view: RecallView, rows: Row[], config: RecallConfig, changes: Map<string, RankChange>): void {
  list.show({ rows, config, changes, selectedId: io.context.selectedId })
  io.writeSummary(view)
  for (const f of io.followers) f(config)
}

/** `config` with its recency weight a tenth away (down from 0.5 and above, else up): a step of a drag, for the warm-up. */
function nudged(config: RecallConfig): RecallConfig {
  const r = config.weights.recency
  return { ...config, weights: { ...config.weights, recency: r >= 0.5 ? r - 0.1 : r + 0.1 } }
}
