/**
 * Which components rendered, read from React's commits the way React DevTools' profiler reads them: React reports
 * every commit to `__REACT_DEVTOOLS_GLOBAL_HOOK__` if one exists when react-dom loads, so this module installs a
 * minimal hook when it is imported, and the dom setup file (setup.ts) imports it before anything loads React.
 * A test counts renders per component without replacing the component's module (`vi.mock`), which a worker that
 * runs several files in one module registry cannot honour (docs/internals/testing.md, "Isolation").
 * Framework-free.
 */

/** The fields of React's Fiber read here (react-reconciler's internal shape, which React DevTools reads too). */
export interface Fiber {
  tag: number
  type: unknown
  elementType: unknown
  memoizedProps: Record<string, unknown> | null
  flags: number
  child: Fiber | null
  sibling: Fiber | null
  alternate: Fiber | null
}

interface CommitHook {
  supportsFiber: true
  renderers: Map<number, unknown>
  listeners: Set<(root: Fiber) => void>
  inject: () => number
  onCommitFiberRoot: (id: number, root: { current: Fiber }) => void
  onCommitFiberUnmount: () => void
  onPostCommitFiberRoot: () => void
  checkDCE: () => void
}

// Kept on the global object, not in this module: without isolation the setup file runs again before every test
// file, while react-dom (loaded once per worker) keeps reporting to the first hook it found.
const g = globalThis as { __REACT_DEVTOOLS_GLOBAL_HOOK__?: CommitHook }
g.__REACT_DEVTOOLS_GLOBAL_HOOK__ ??= {
  supportsFiber: true,
  renderers: new Map(),
  listeners: new Set(),
  inject: () => 1,
  onCommitFiberRoot(_id, root) {
    for (const l of this.listeners) l(root.current)
  },
  onCommitFiberUnmount: () => undefined,
  onPostCommitFiberRoot: () => undefined,
  checkDCE: () => undefined,
}
const hook = g.__REACT_DEVTOOLS_GLOBAL_HOOK__

/** React's PerformedWork flag: the fiber's component ran in this render (it was not bailed out of). */
const PERFORMED_WORK = 1
/** React's work tags of fibers whose render calls a component: function, class, forwardRef, simple memo. */
const COMPONENT_TAGS = new Set([0, 1, 11, 15])

/** Every component fiber of a subtree mounted in this commit (all of them rendered). */
function visitMounted(fiber: Fiber, visit: (f: Fiber) => void): void {
  if (COMPONENT_TAGS.has(fiber.tag)) visit(fiber)
  for (let c = fiber.child; c; c = c.sibling) visitMounted(c, visit)
}

/**
 * The component fibers under `fiber` (committed tree) that rendered in this commit. A subtree whose children are the
 * previous commit's (`child === alternate.child`) was skipped whole, as React DevTools' profiler reads it.
 */
function visitRendered(fiber: Fiber, visit: (f: Fiber) => void): void {
  for (let c = fiber.child; c; c = c.sibling) {
    const prev = c.alternate
    if (!prev) {
      visitMounted(c, visit)
      continue
    }
    if (COMPONENT_TAGS.has(c.tag) && (c.flags & PERFORMED_WORK) !== 0) visit(c)
    if (c.child !== prev.child) visitRendered(c, visit)
  }
}

/**
 * Count renders from now on: each rendered component fiber that `keyOf` names (null = not counted) adds one to its
 * key. `stop` ends the counting.
 */
export function countRenders(keyOf: (fiber: Fiber) => string | null): { counts: Map<string, number>; stop: () => void } {
  const counts = new Map<string, number>()
  const listener = (root: Fiber) =>
    visitRendered(root, (f) => {
      const k = keyOf(f)
      if (k !== null) counts.set(k, (counts.get(k) ?? 0) + 1)
    })
  hook.listeners.add(listener)
  return { counts, stop: () => hook.listeners.delete(listener) }
}
