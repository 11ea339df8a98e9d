/**
 * Which element shows which memory in the virtualised candidate list (docs/internals/performance.md,
 * "Recall sliders"). A slider step re-ranks the candidates: most memories in view stay in view at another
 * position. Their element is kept, moved by its transform only (a repaint, no layout, no new text), and only a
 * memory that comes into view takes the element of one that left, getting its text. The elements stay in the
 * DOM in the order they were made in while the ranking changes: putting them back into rank order moves DOM
 * nodes, and a moved node is laid out again as if new (what keying rows by id cost: most of a step's
 * layout). Once the list has rested, `sort` puts them into rank order again (reading order, find-in-page).
 */

/** One element of the list: its React key, and the memory it shows. */
export interface Slot {
  key: number
  id: string
}

export class RowSlots {
  private slots: Slot[] = []
  private nextKey = 0
  private sorted = 0

  /**
   * The elements for the memories in view (`ids`, in rank order). While `sortRequest` is the one of the last
   * call, elements keep their DOM order: a memory still in view keeps its element; one that came into view
   * takes the place and key of one that left (in DOM order), else a new element at the end. A new
   * `sortRequest` returns them in rank order, each memory keeping its element. The same call twice in a row
   * returns the same slots (so a render may run twice).
   */
  place(ids: readonly string[], sortRequest: number): readonly Slot[] {
    const keyOf = new Map(this.slots.map((s) => [s.id, s.key]))
    const want = new Set(ids)
    const freed = this.slots.filter((s) => !want.has(s.id)).map((s) => s.key)
    let f = 0
    const take = () => (f < freed.length ? freed[f++] : this.nextKey++)
    if (sortRequest !== this.sorted) {
      this.sorted = sortRequest
      this.slots = ids.map((id) => ({ key: keyOf.get(id) ?? take(), id }))
      return this.slots
    }
    const fresh = ids.filter((id) => !keyOf.has(id))
    let n = 0
    const next: Slot[] = []
    for (const s of this.slots) {
      if (want.has(s.id)) next.push(s)
      else if (n < fresh.length) next.push({ key: s.key, id: fresh[n++] })
    }
    while (n < fresh.length) next.push({ key: this.nextKey++, id: fresh[n++] })
    this.slots = next
    return next
  }

  /** True when the elements are in rank order (the order of the last `place`'s ids). */
  inOrder(ids: readonly string[]): boolean {
    return this.slots.length === ids.length && this.slots.every((s, i) => s.id === ids[i])
  }
}
