/**
 * Sets an element's text when it differs, changing its one text node in place where it has one. Setting
 * `textContent` replaces the node: the browser then styles a new node and lays out a new text object, where a
 * changed text node is only laid out again. The Recall screen's drag writes ~30 numbers a step this way
 * (docs/internals/performance.md, "Round 6 (stop 34)"). Empty text removes the node (the element is `:empty` again).
 */
export function writeText(el: Element | null | undefined, text: string): void {
  if (!el) return
  const n = el.firstChild
  if (text && n instanceof Text && n === el.lastChild) {
    if (n.data !== text) n.data = text
  } else if (el.textContent !== text) el.textContent = text
}
