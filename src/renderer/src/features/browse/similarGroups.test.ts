import { describe, expect, it } from 'vitest'
import { groupDuplicates } from './similarGroups'

const n = (id: string, content: string, similarity: number) => ({ memory: { id, content }, similarity })

describe('groupDuplicates', () => {
  it('folds identical texts into one group with every id, best first', () => {
    const g = groupDuplicates([n('a', 'same', 1), n('b', 'other', 0.9), n('c', 'same', 1), n('d', 'same', 0.99), n('e', 'Same', 0.5)])
    expect(g.map((x) => [x.content, x.ids, x.best, x.worst])).toEqual([
      ['same', ['a', 'c', 'd'], 1, 0.99],
      ['other', ['b'], 0.9, 0.9],
      // exact duplicates only: a different case is a different text
      ['Same', ['e'], 0.5, 0.5],
    ])
  })
  it('keeps an empty list empty', () => {
    expect(groupDuplicates([])).toEqual([])
  })
})
