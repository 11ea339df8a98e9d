/** writeText: a number written again changes the element's text node in place (docs/internals/performance.md, "Round 6 (stop 34)"). */
import { describe, expect, it } from 'vitest'
import { writeText } from './writeText'

function el(html: string): HTMLElement {
  const d = document.createElement('div')
  d.innerHTML = html
  return d.firstElementChild as HTMLElement
}

describe('writeText', () => {
  it('changes the one text node in place, and leaves it alone when the text is the same', () => {
    const s = el('<span>0.512</span>')
    const node = s.firstChild
    writeText(s, '0.498')
    expect(s.textContent).toBe('0.498')
    expect(s.firstChild).toBe(node)
    expect(s.childNodes).toHaveLength(1)
    const m = new MutationObserver(() => undefined)
    m.observe(s, { subtree: true, childList: true, characterData: true })
    writeText(s, '0.498')
    expect(m.takeRecords()).toHaveLength(0)
    m.disconnect()
  })

  it('writes an empty element, empties one (no text node left), and replaces mixed children', () => {
    const s = el('<span></span>')
    writeText(s, '▲2')
    expect(s.innerHTML).toBe('▲2')
    writeText(s, '')
    expect(s.childNodes).toHaveLength(0)
    writeText(s, '▼1')
    expect(s.textContent).toBe('▼1')
    const mixed = el('<span>a<b>b</b></span>')
    writeText(mixed, 'c')
    expect(mixed.innerHTML).toBe('c')
    writeText(null, 'x')
  })
})
