/**
 * The Recall screen's exact scope count: when the engine's count is a lower bound (it stops at its scan threshold),
 * the screen asks main for the exact one (recall.scopeCount), once per scope and time. Not once per recall: at a
 * million memories the count scans them all, and the next recall waited behind it in the store's queue.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { cleanup, fireEvent, render, screen, waitFor } from '@testing-library/react'
import type { CandidateRaw, RecallTrace } from '../../../../shared/types'
import { AppContext } from '../../app/context'
import { installFakeBridge, type FakeBridge } from '../../test/fakeBridge'
import { FIRST_QUERY_WAIT_MS, recallAnswers, recallApp } from '../../test/recallAnswers'
import { RecallView } from './RecallView'

const DAY = 86_400_000
const NOW = Date.UTC(2026, 0, 10)
const cands: CandidateRaw[] = Array.from({ length: 12 }, (_, i) => ({
  id: `m${i}`,
  similarity: 0.9 - i / 50,
  lexical: 0,
  bm25: null,
  ageLastUsedMs: (i + 1) * DAY,
  ageCreatedMs: (i + 1) * DAY,
  salience: 0.5,
  denseRank: i + 1,
  lexicalRank: null,
  recencyRank: i + 1,
  textLength: 40,
}))
/** The scope main counts exactly: more than the engine counted (it stopped at its threshold). */
const EXACT = 1_234_567
const base = recallAnswers(cands, NOW)
/** main's answers: the recall's scope count capped (a lower bound), the exact count from recall.scopeCount. */
const answer = (channel: string, input: never): unknown => {
  const a = base(channel, input)
  if (channel === 'recall.run') {
    const t = a as RecallTrace
    // at the time asked (the shared answers keep theirs)
    const now = (input as { now?: number }).now ?? NOW
    return { ...t, now, counts: { ...t.counts, inScope: 5000, inScopeCapped: true } }
  }
  if (channel === 'recall.scopeCount') return { total: EXACT }
  return a
}

let bridge: FakeBridge
beforeEach(() => {
  bridge = installFakeBridge(answer)
})
afterEach(() => {
  cleanup()
  bridge.uninstall()
})

const asked = (channel: string) => bridge.calls.filter((c) => c.channel === channel)
const exactCounts = () => asked('recall.scopeCount')

describe('the exact scope count', { timeout: 60_000 }, () => {
  it('is asked once for a scope and time, whatever the query; another time asks again', async () => {
    render(
      <AppContext.Provider value={recallApp(NOW)}>
        <RecallView />
      </AppContext.Provider>,
    )
    await screen.findByText(/query \d+ ms/, undefined, { timeout: FIRST_QUERY_WAIT_MS })
    // the exact count replaces the engine's lower bound on screen
    await waitFor(() => expect(document.body).toHaveTextContent('1,234,567 in scope'))
    expect(exactCounts()).toHaveLength(1)
    expect(exactCounts()[0].input).toMatchObject({ now: NOW })

    // Two more queries (live: each runs as typed) at the same time, over the same scope: no new count.
    const query = screen.getByRole('textbox', { name: /query/i })
    for (const text of ['another query', 'and a third']) {
      const runs = asked('recall.run').length
      fireEvent.change(query, { target: { value: text } })
      await waitFor(() => expect(asked('recall.run').length).toBeGreaterThan(runs), { timeout: 10_000 })
      await screen.findByText(/query \d+ ms/)
    }
    expect(asked('recall.run').length).toBeGreaterThanOrEqual(3)
    expect(exactCounts()).toHaveLength(1)
    expect(document.body).toHaveTextContent('1,234,567')

    // Another time: the scope at that time is counted again.
    const later = NOW + DAY
    fireEvent.change(screen.getByLabelText(/now \(utc\)/i), { target: { value: new Date(later).toISOString().slice(0, 16) } })
    await waitFor(() => expect(exactCounts()).toHaveLength(2), { timeout: 10_000 })
    expect(exactCounts()[1].input).toMatchObject({ now: later })
  })
})
