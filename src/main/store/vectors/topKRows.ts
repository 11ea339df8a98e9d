/** The bounded top-k over a row's scores that the in-memory dense scan ranks with (vectorIndex.ts, recall/dense.ts). */

/**
 * Indices of the k largest values among rows [0, n) accepted by `accept`,
 * best first. Ties: lower `keys[row]` first (lower row when no keys). A
 * bounded min-heap: O(n log k).
 */
export function topKRows(scores: ArrayLike<number>, n: number, k: number, accept?: (row: number) => boolean, keys?: ArrayLike<number>): number[] {
  if (k <= 0) return []
  const heap: number[] = [] // rows; heap[0] is the worst kept
  const key = keys ?? null
  const worse = key
    ? (a: number, b: number) => scores[a] < scores[b] || (scores[a] === scores[b] && (key[a] > key[b] || (key[a] === key[b] && a > b)))
    : (a: number, b: number) => scores[a] < scores[b] || (scores[a] === scores[b] && a > b)
  const siftUp = (i: number) => {
    while (i > 0) {
      const p = (i - 1) >> 1
      if (!worse(heap[i], heap[p])) break
      ;[heap[i], heap[p]] = [heap[p], heap[i]]
      i = p
    }
  }
  const siftDown = (i: number) => {
    for (;;) {
      const l = 2 * i + 1
      const r = l + 1
      let m = i
      if (l < heap.length && worse(heap[l], heap[m])) m = l
      if (r < heap.length && worse(heap[r], heap[m])) m = r
      if (m === i) break
      ;[heap[i], heap[m]] = [heap[m], heap[i]]
      i = m
    }
  }
  // Once the heap is full, a row scoring below its worst cannot enter: one comparison rejects most of
  // a million rows (the full order, `worse`, only decides the rest).
  let floor = -Infinity
  for (let row = 0; row < n; row++) {
    if (scores[row] < floor) continue
    if (accept && !accept(row)) continue
    if (heap.length < k) {
      heap.push(row)
      siftUp(heap.length - 1)
      if (heap.length === k) floor = scores[heap[0]]
    } else if (worse(heap[0], row)) {
      heap[0] = row
      siftDown(0)
      floor = scores[heap[0]]
    }
  }
  return heap.sort((a, b) => (worse(a, b) ? 1 : worse(b, a) ? -1 : 0))
}
