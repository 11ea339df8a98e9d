/**
 * The event view's new parts render what the event sources read: how each result
 * matched, a logged score or "—", the unmatched results, the origin, the
 * decision; and the evidence and counterfactual panels mark the shared words and
 * show the numbers main computed.
 */
import { afterEach, describe, expect, it, vi } from 'vitest'
import { cleanup, fireEvent, render, screen, within } from '@testing-library/react'
import type { CounterfactualReport, EvidenceAttribution, TraceEventDetail } from '../../../../shared/trace'
import type { RecallConfig, RecallEvent, UnitInfo } from '../../../../shared/types'
import { DecisionView, OriginLine, ReturnedTable, UnmatchedTable } from './EventParts'
import { CounterfactualResult, EvidencePanel } from './EvidencePanel'

afterEach(cleanup)

const unit = (id: string, content: string): UnitInfo => ({
  id,
  content,
  kind: 'semantic',
  role: 'assistant',
  tier: 'long_term',
  sessionId: null,
  userId: 'u',
  agentId: 'a',
  createdAt: 0,
  lastUsedAt: null,
  turn: null,
  source: null,
  salience: 0.5,
})

const AT = Date.UTC(2026, 0, 5, 10, 0, 0)
const event: RecallEvent = {
  id: 'letta:call-1',
  at: AT,
  agentId: 'agent-1',
  userId: null,
  sessionId: null,
  turn: null,
  query: 'when do we deploy billing?',
  cue: null,
  preset: null,
  config: null,
  results: [
    { id: 'passage-1', score: 0.82, matchedBy: 'id' },
    { id: 'passage-2', score: Number.NaN, matchedBy: 'normalized' },
    { id: 'passage-3', score: 0.4, matchedBy: 'text' },
  ],
  origin: { kind: 'letta', tool: 'archival_memory_search', file: '/home/u/.letta/letta.db', line: 42, callId: 'call-1' },
  unmatched: [{ rank: 4, loggedId: 'passage-zz', text: 'A passage that was deleted since.', score: null }],
  decision: { text: 'We deploy billing on Friday mornings, after the staging check.', toolCall: null, at: AT + 3200, via: 'assistant message' },
}

const detail = {
  event,
  config: { unit: 'memory' } as RecallConfig,
  configSource: 'preset',
  configNotes: [],
  injected: event.results.map((r, i) => ({ id: r.id, rank: i + 1, score: r.score, unit: unit(r.id, `text of ${r.id}`) })),
  context: { text: '', tokens: 0, source: 'rerendered', note: null },
  loggedVector: null,
} as TraceEventDetail

describe('event view parts', () => {
  it('each result shows its rank, logged score ("—" when none) and how it matched', () => {
    const onWhy = vi.fn()
    render(<ReturnedTable detail={detail} replayRank={() => null} whyId={null} onWhy={onWhy} onOpenMemory={() => {}} />)
    const rows = screen.getByRole('table', { name: 'Injected memories' }).querySelectorAll('tbody tr')
    const cells = [...rows].map((r) => [...r.querySelectorAll('td')].slice(0, 3).map((c) => c.textContent))
    expect(cells).toEqual([
      ['1', 'passage-1id', '0.820'],
      ['2', 'passage-2norm', '—'],
      ['3', 'passage-3text', '0.400'],
    ])
    expect(screen.getAllByTestId('matched-by').map((b) => b.getAttribute('title'))).toEqual([
      expect.stringContaining('matched by id'),
      expect.stringContaining('matched by normalized'),
      expect.stringContaining('matched by text'),
    ])
    fireEvent.click(rows[1])
    expect(onWhy).toHaveBeenCalledWith('passage-2')
  })

  it('an event from the recall_events table (no matchedBy) shows no badge', () => {
    const plain = { ...detail, event: { ...event, results: event.results.map(({ id, score }) => ({ id, score })) } }
    render(<ReturnedTable detail={plain} replayRank={() => null} whyId={null} onWhy={() => {}} onOpenMemory={() => {}} />)
    expect(screen.queryAllByTestId('matched-by')).toHaveLength(0)
  })

  it('unmatched results are listed under their own heading with the logged id and text', () => {
    render(<UnmatchedTable unmatched={event.unmatched} />)
    const sec = screen.getByRole('region', { name: 'Unmatched results' })
    expect(within(sec).getByRole('heading').textContent).toBe('Not matched to a memory (1)')
    const cells = [...sec.querySelectorAll('tbody td')].map((c) => c.textContent)
    expect(cells).toEqual(['4', 'passage-zz', '—', 'A passage that was deleted since.'])
  })

  it('the origin: kind, tool, file:line, ids', () => {
    render(<OriginLine origin={event.origin} />)
    const o = screen.getByTestId('event-origin').textContent
    expect(o).toContain('Letta messages')
    expect(o).toContain('archival_memory_search')
    expect(o).toContain('letta.db:42')
    expect(o).toContain('call call-1')
  })

  it('the decision: the next message with its time and delay; a tool call with pretty arguments; none says so', () => {
    const { unmount } = render(<DecisionView decision={event.decision} event={event} />)
    expect(screen.getByTestId('decision').textContent).toBe('We deploy billing on Friday mornings, after the staging check.')
    expect(screen.getByTestId('decision-at').textContent).toBe('assistant message · 2026-01-05 10:00 UTC (+3.2 s after the recall)')
    unmount()
    const tool = { text: null, toolCall: { name: 'create_ticket', arguments: '{"title":"x"}' }, at: null, via: 'tool call' }
    const { unmount: u2 } = render(<DecisionView decision={tool} event={event} />)
    expect(screen.getByTestId('decision').textContent).toBe('tool call create_ticket{\n  "title": "x"\n}')
    expect(screen.getByTestId('decision-at').textContent).toBe('tool call · time not recorded')
    u2()
    render(<DecisionView decision={null} event={event} />)
    expect(screen.getByRole('region', { name: 'Decision' }).textContent).toContain('records no decision')
  })
})

describe('EvidencePanel', () => {
  const evidence: EvidenceAttribution = {
    decision: event.decision!,
    text: event.decision!.text!,
    union: 0.75,
    decisionTerms: [],
    embedder: { spec: 'ollama:nomic-embed-text', model: 'nomic-embed-text', available: false, reason: 'Ollama is not reachable (connection refused)' },
    rows: [
      {
        id: 'passage-1',
        rank: 1,
        text: 'Billing deploys happen on Friday.',
        token: 0.2,
        shared: [{ term: 'billing', weight: 1.7 }],
        embedding: null,
        embeddingWhy: 'x',
      },
      {
        id: 'passage-2',
        rank: 2,
        text: 'Deploys wait for the staging check on Friday mornings.',
        token: 0.6,
        shared: [
          { term: 'staging', weight: 1.7 },
          { term: 'check', weight: 1.7 },
          { term: 'friday', weight: 1.3 },
          { term: 'morning', weight: 1.3 },
          { term: 'deploy', weight: 1.3 },
        ],
        embedding: null,
        embeddingWhy: 'x',
      },
    ],
  }
  it('orders memories by support, marks the shared words, says why there is no embedding overlap', () => {
    const onPick = vi.fn()
    render(<EvidencePanel evidence={evidence} onPick={onPick} />)
    const rows = screen.getByRole('table', { name: 'Evidence table' }).querySelectorAll('tbody tr')
    expect([...rows].map((r) => r.getAttribute('data-id'))).toEqual(['passage-2', 'passage-1'])
    expect([...rows[0].querySelectorAll('mark')].map((m) => m.textContent)).toEqual(['Deploys', 'staging', 'check', 'Friday', 'mornings'])
    expect(rows[0].querySelectorAll('td')[2].textContent).toBe('60%')
    expect(rows[0].querySelectorAll('td')[3].textContent).toBe('—')
    expect(screen.getByTestId('embedding-why').textContent).toContain('connection refused')
    // the decision marks every word some memory shares
    expect([...screen.getByTestId('evidence-decision').querySelectorAll('mark')].map((m) => m.textContent)).toEqual([
      'deploy',
      'billing',
      'Friday',
      'mornings',
      'staging',
      'check',
    ])
    fireEvent.click(rows[1])
    expect(onPick).toHaveBeenCalledWith('passage-1')
  })
})

describe('CounterfactualResult', () => {
  it('a baseline row and one per memory: similarity to the decision and the baseline, the word change, the diff on click', () => {
    const report: CounterfactualReport = {
      eventId: 'e',
      chat: { spec: 'ollama:llama3.2', model: 'llama3.2', host: 'http://127.0.0.1:1' },
      original: 'deploy friday',
      prompt: { system: 's', user: 'u' },
      baseline: { omitted: null, rank: null, text: 'deploy on friday', ms: 5, vsOriginal: 1, vsBaseline: null, diff: null, context: 'rerendered' },
      rows: [
        {
          omitted: 'passage-1',
          rank: 1,
          text: 'deploy on monday',
          ms: 5,
          vsOriginal: 0.5,
          vsBaseline: 0.5,
          diff: {
            ops: [
              { op: 'same', text: 'deploy on' },
              { op: 'add', text: 'monday' },
              { op: 'del', text: 'friday' },
            ],
            added: 1,
            removed: 1,
          },
          context: 'rerendered',
        },
      ],
      skipped: [],
      calls: 2,
      promptTokens: 10,
      completionTokens: 4,
      tookMs: 1500,
      notes: [],
    }
    render(<CounterfactualResult report={report} />)
    const rows = screen.getByRole('table', { name: 'Counterfactual table' }).querySelectorAll('tbody tr')
    expect([...rows].map((r) => [...r.querySelectorAll('td')].map((c) => c.textContent))).toEqual([
      ['nothing (full context)', '1.00', '—', '—'],
      ['#1 passage-1', '0.50', '0.50', '+1 −1'],
    ])
    fireEvent.click(rows[1])
    const answer = screen.getByTestId('counterfactual-answer')
    expect(answer.querySelector('ins')!.textContent).toBe('monday ')
    expect(answer.querySelector('del')!.textContent).toBe('friday ')
    expect(screen.getByTestId('counterfactual-result').textContent).toContain('2 calls to ollama:llama3.2 in 1.5 s')
  })
})
