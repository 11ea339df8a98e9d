/**
 * The trace panels render what main computed — statuses, causes, the smallest
 * change, drivers — and hand picks back to the view.
 */
import { afterEach, describe, expect, it, vi } from 'vitest'
import { cleanup, fireEvent, render, screen, within } from '@testing-library/react'
import type { KnobResult, TraceDrivers, TraceReplay, WhyNot } from '../../../../shared/trace'
import type { RecallConfig, RecallEvent, RecallTrace, UnitInfo } from '../../../../shared/types'
import { ReplayDiff } from './ReplayDiff'
import { WhyPicker, WhyResult } from './WhyPanel'
import { DriversPanel } from './DriversPanel'

afterEach(cleanup)

const unit = (id: string, content: string): UnitInfo => ({
  id,
  content,
  kind: 'episodic',
  role: 'user',
  tier: 'working',
  sessionId: 's1',
  userId: 'u',
  agentId: 'a',
  createdAt: 0,
  lastUsedAt: null,
  turn: 1,
  source: null,
  salience: 0.5,
})
const config = {
  weights: { similarity: 0.6, lexical: 0, recency: 0.25, salience: 0.15 },
  candidatePool: 30,
  unit: 'memory',
  topK: 5,
} as unknown as RecallConfig

function replay(over: Partial<TraceReplay> = {}): TraceReplay {
  return {
    eventId: 'ev-1',
    mode: 'logged',
    event: { id: 'ev-1', at: Date.UTC(2026, 9, 1), results: [] } as unknown as RecallEvent,
    now: Date.UTC(2026, 9, 1),
    config,
    loggedConfig: config,
    configSource: 'logged',
    configChanges: [],
    vector: { source: 'embedder', embedder: { name: 'hashing', model: 'hashing-256', available: true }, loggedModel: 'hashing-256' },
    identical: false,
    counts: { same: 1, rescored: 0, reordered: 0, missing: 1, extra: 1 },
    rows: [
      {
        id: 'm-a',
        status: 'same',
        logged: { rank: 1, score: 0.9 },
        replayed: { rank: 1, score: 0.9 },
        scoreDelta: 0,
        shifted: false,
        replayGate: null,
        causes: [],
        unit: unit('m-a', 'deploy staging'),
      },
      {
        id: 'm-b',
        status: 'missing',
        logged: { rank: 2, score: 0.8 },
        replayed: null,
        scoreDelta: null,
        shifted: false,
        replayGate: 'topK',
        causes: [
          { code: 'last-used-changed', text: 'last_used_at changed since: now 2026-10-20 00:00, after the event' },
          { code: 'gate', text: 'ranked #6 by score (0.700); topK 5' },
        ],
        unit: unit('m-b', 'rollback plan'),
      },
      {
        id: 'm-c',
        status: 'extra',
        logged: null,
        replayed: { rank: 2, score: 0.75 },
        scoreDelta: null,
        shifted: false,
        replayGate: null,
        causes: [{ code: 'displaced', text: 'not injected in the log; it takes the slot freed by m-b' }],
        unit: null,
      },
    ],
    notes: [{ code: 'config-differs', text: 'config differs: weights.recency 0.25 → 0.4' }],
    trace: {} as RecallTrace,
    tookMs: 3.2,
    ...over,
  }
}

describe('ReplayDiff', () => {
  it('shows the verdict, every row with its status and causes, and picks a row', () => {
    const onPick = vi.fn()
    render(<ReplayDiff replay={replay()} onPick={onPick} />)
    expect(screen.getByRole('status').textContent).toContain('Differs from the log')
    expect(screen.getByRole('status').textContent).toContain('1 missing')
    const table = screen.getByRole('table', { name: 'Replay diff (logged)' })
    const rows = table.querySelectorAll('tbody tr[data-status]')
    expect([...rows].map((r) => r.getAttribute('data-status'))).toEqual(['same', 'missing', 'extra'])
    const why = screen.getByRole('list', { name: 'Why m-b differs' })
    expect(why.textContent).toContain('last_used_at changed since')
    expect(why.textContent).toContain('last used changed')
    expect(screen.getByText('no longer in the DB')).toBeInTheDocument()
    expect(screen.getByRole('list', { name: 'Replay notes' }).textContent).toContain('weights.recency 0.25 → 0.4')
    fireEvent.click(rows[1])
    expect(onPick).toHaveBeenCalledWith('m-b')
  })

  it('an identical replay says so', () => {
    render(
      <ReplayDiff
        replay={replay({ identical: true, counts: { same: 1, rescored: 0, reordered: 0, missing: 0, extra: 0 }, rows: replay().rows.slice(0, 1), notes: [] })}
      />,
    )
    expect(screen.getByRole('status').textContent).toContain('Identical to the log')
    expect(screen.queryByRole('list', { name: 'Replay notes' })).toBeNull()
  })
})

const knob = (k: KnobResult['knob'], current: number | null, to: number | null, normalized = 0.1, pushedOut: string[] = []): KnobResult => ({
  knob: k,
  current,
  change:
    to === null
      ? null
      : {
          knob: k,
          from: current,
          to,
          delta: to - (current ?? 0),
          normalized,
          rank: 5,
          pushedOut,
          pulledIn: [],
          verified: { engine: true, pushedOut, rank: 5 },
        },
  reason: to === null ? 'no lexical weight in [0, 1] injects it' : null,
  evaluations: 3,
})

function why(over: Partial<WhyNot> = {}): WhyNot {
  const knobs = [knob('weights.lexical', 0, null), knob('weights.recency', 0.25, 0.31, 0.06, ['m-x']), knob('topK', 5, 7, 0.073)]
  return {
    memoryId: 'm-q',
    unitId: 'm-q',
    eventId: 'ev-1',
    query: 'q',
    cue: null,
    now: Date.UTC(2026, 9, 1),
    config,
    status: 'dropped',
    summary: 'm-q was scored 0.500 and dropped: ranked #7 by score (0.500); topK 5.',
    scope: { inScope: true, failures: [], viaBlend: false },
    candidate: { similarity: 0.6, bm25: -3, denseRank: 4, lexicalRank: 9, recencyRank: null, inPool: true, poolNeeded: 4 },
    scored: {
      score: 0.5,
      scoreRank: 7,
      features: { similarity: 0.6, lexical: 0.2, recency: 0.5, salience: 0.4 },
      contributions: { similarity: 0.36, lexical: 0, recency: 0.125, salience: 0.06 },
      tokens: 12,
      gate: 'topK',
      rank: null,
    },
    gate: { name: 'topK', detail: 'ranked #7 by score (0.500); topK 5' },
    injected: [],
    knobs,
    best: knobs[1].change,
    pair: null,
    verdict: 'm-q is not injected because ranked #7 by score (0.500); topK 5; recency weight 0.25 → 0.31 injects it at rank 5.',
    notes: [],
    mode: 'dense',
    memory: {
      id: 'm-q',
      agentId: 'agent-a',
      userId: null,
      sessionId: 's-1',
      role: 'user',
      kind: 'episodic',
      tier: 'long_term',
      content: 'The staging deploy needs the VPN.',
      summary: null,
      salience: 0.4,
      createdAt: Date.UTC(2026, 8, 1),
      lastUsedAt: null,
      useCount: null,
      turn: null,
      source: null,
      metadata: null,
      tenantId: null,
    },
    timings: { totalMs: 20, setupMs: 1, traceMs: 4, searchMs: 5, verifyMs: 10, evaluations: 40, depth: null },
    ...over,
  }
}

describe('WhyResult', () => {
  it("shows the memory's text and metadata, and 'Try this change' hands Recall the changed config and the memory", () => {
    const onTry = vi.fn()
    render(<WhyResult why={why()} onTryChange={onTry} preset="portal-semantic" />)
    expect(screen.getByTestId('why-memory-text').textContent).toBe('The staging deploy needs the VPN.')
    expect(screen.getByTestId('why-memory-meta').textContent).toMatch(
      /kind episodic · role user · tier long_term · agent agent-a · session s-1 · created 2026-09-01/,
    )
    fireEvent.click(screen.getByRole('button', { name: 'Try this change' }))
    const p = onTry.mock.calls[0][0] as Record<string, string>
    expect(p.highlight).toBe('m-q')
    // Recall opens on the event's own preset, not the default one
    expect(p.preset).toBe('portal-semantic')
    expect(p.query).toBe('q')
    expect(p.now).toBe(String(Date.UTC(2026, 9, 1)))
    // The best change (recency weight 0.25 → 0.31) applied, nothing else moved.
    expect(JSON.parse(p.config)).toEqual({ ...config, weights: { ...config.weights, recency: 0.31 } })
  })

  it('stars the smallest change, says what it pushes out, and lists every knob', () => {
    render(<WhyResult why={why()} />)
    expect(screen.getByTestId('why-status').textContent).toBe('dropped by a gate')
    const best = screen.getByTestId('why-best')
    expect(best.textContent).toContain('recency weight 0.25 → 0.31')
    expect(best.textContent).toContain('pushes out m-x')
    expect(best.textContent).toContain('verified by re-running the recall')
    expect(best.textContent).toContain('--set weights.recency=0.31')
    const table = screen.getByRole('table', { name: 'Single changes' })
    const star = within(table).getByText(/★/)
    expect(star.closest('tr')?.getAttribute('data-knob')).toBe('weights.recency')
    expect(within(table).getByText(/no lexical weight/)).toBeInTheDocument()
    expect(screen.getByTestId('why-gate').textContent).toContain('topK')
    // features × weights = contributions
    expect(screen.getByRole('table', { name: 'Features' }).textContent).toContain('0.360')
  })

  it('out of scope: the failing filter and its fix, no knob table', () => {
    render(
      <WhyResult
        why={why({
          status: 'out-of-scope',
          summary: 'm-q is out of scope',
          scope: {
            inScope: false,
            failures: [{ field: 'scope.tiers', value: 'archived', expected: '[working, long_term]', fix: "add 'archived' to scope.tiers" }],
            viaBlend: false,
          },
          candidate: null,
          scored: null,
          knobs: [],
          best: null,
          gate: { name: 'scope', detail: 'scope.tiers' },
        })}
      />,
    )
    expect(screen.getByRole('table', { name: 'Scope failures' }).textContent).toContain("add 'archived' to scope.tiers")
    expect(screen.queryByRole('table', { name: 'Single changes' })).toBeNull()
    expect(screen.queryByTestId('why-best')).toBeNull()
  })
})

describe('WhyPicker', () => {
  it('explains a typed id or a picked candidate', () => {
    const onExplain = vi.fn()
    render(<WhyPicker value={null} candidates={[{ id: 'm-1', label: 'm-1 · 0.5 · topK' }]} onExplain={onExplain} />)
    fireEvent.change(screen.getByLabelText('Memory id'), { target: { value: ' m-9 ' } })
    fireEvent.click(screen.getByRole('button', { name: 'Explain' }))
    expect(onExplain).toHaveBeenLastCalledWith('m-9')
    fireEvent.change(screen.getByLabelText('Pick a candidate'), { target: { value: 'm-1' } })
    expect(onExplain).toHaveBeenLastCalledWith('m-1')
  })
})

describe('DriversPanel', () => {
  it('names the memory that mattered most and each leave-one-out', () => {
    const row = (id: string, rank: number, share: number, rbo: number, repl: string | null) => ({
      id,
      rank,
      score: share,
      share,
      contributions: { similarity: share * 0.7, lexical: 0, recency: share * 0.3, salience: 0 },
      featureShares: { similarity: 0.7, lexical: 0, recency: 0.3, salience: 0 },
      loo: {
        after: [],
        rbo,
        topAfter: rank === 1 ? 'm-2' : 'm-1',
        topChanged: rank === 1,
        replacement: repl ? { id: repl, score: 0.1 } : null,
        scoreLoss: 0.2,
        tokenDelta: 3,
      },
      unit: unit(id, `text ${id}`),
    })
    const d: TraceDrivers = {
      eventId: 'ev-1',
      identical: true,
      notes: [],
      total: 1,
      rows: [row('m-1', 1, 0.6, 0.5, 'm-9'), row('m-2', 2, 0.4, 0.8, null)],
      byShare: ['m-1', 'm-2'],
      byInfluence: ['m-1', 'm-2'],
      mattersMost: { id: 'm-1', why: 'without it the top result becomes m-2' },
      orderMode: false,
    }
    const onPick = vi.fn()
    render(<DriversPanel drivers={d} onPick={onPick} />)
    expect(screen.getByTestId('mattered-most').textContent).toContain('m-1')
    const table = screen.getByRole('table', { name: 'Drivers table' })
    expect(table.textContent).toContain('60%')
    expect(table.textContent).toContain('+ m-9')
    expect(table.textContent).toContain('nothing in')
    expect(table.textContent).toContain('top → m-2')
    // Leave-one-out first: the rows follow byInfluence, and the "without it" column comes before share.
    const heads = within(table)
      .getAllByRole('columnheader')
      .map((h) => h.textContent)
    expect(heads.indexOf('without it')).toBeLessThan(heads.indexOf('share'))
    fireEvent.click(table.querySelector('tr[data-id="m-2"]')!)
    expect(onPick).toHaveBeenCalledWith('m-2')
  })
})
