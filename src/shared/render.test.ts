import { describe, expect, it } from 'vitest'
import { fieldguideLabel, isoDate, renderContext, renderResults, type RenderItem } from './render'
import type { CandidateRaw, TraceResult, UnitInfo } from './types'

const unit = (id: string, p: Partial<UnitInfo> = {}): UnitInfo => ({
  id,
  content: `content ${id}`,
  kind: null,
  role: 'user',
  tier: 'working',
  sessionId: 's1',
  userId: 'u1',
  agentId: null,
  createdAt: Date.UTC(2026, 0, 2, 3, 4, 5),
  lastUsedAt: null,
  turn: null,
  source: null,
  salience: null,
  ...p,
})
const item = (u: UnitInfo, similarity: number | null = 0.5, group?: 'blend'): RenderItem => ({ unit: u, score: 0.5, similarity, group })
const render = (template: Parameters<typeof renderContext>[1]['template'], items: RenderItem[], estimator: 'ceil4' | 'neo' = 'ceil4') =>
  renderContext(items, { template, tokenEstimator: estimator })

describe('templates', () => {
  it('portal-episodic (seed 000): header, date order (stable), yyyy-MM-dd; "" for none', () => {
    const items = [
      item(unit('b', { content: 'second', createdAt: Date.UTC(2026, 4, 9) })),
      item(unit('a', { content: 'first', createdAt: Date.UTC(2026, 2, 1) })),
      item(unit('c', { content: 'same day, later rank', createdAt: Date.UTC(2026, 4, 9) })),
    ]
    expect(render('portal-episodic', items).text).toBe(
      '[Past Conversation Context]\nRelevant past conversations with this user:\n- 2026-03-01: first\n- 2026-05-09: second\n- 2026-05-09: same day, later rank\n',
    )
    expect(render('portal-episodic', [])).toEqual({ text: '', tokens: 0 })
  })

  it('portal-semantic (seed 001): "[Retrieved Knowledge]\\n" even for zero records; null source prints empty', () => {
    expect(render('portal-semantic', []).text).toBe('[Retrieved Knowledge]\n')
    expect(
      render('portal-semantic', [
        item(unit('a', { source: 'wiki/deploy.md', content: 'Deploys need a green staging run.' })),
        item(unit('b', { content: 'x' })),
      ]).text,
    ).toBe('[Retrieved Knowledge]\nSource: wiki/deploy.md\nDeploys need a green staging run.\n---\nSource: \nx\n---\n')
  })

  it('engram (seed 002): the MCP tool’s JSON.stringify(entries, null, 2)', () => {
    const t = render('engram', [
      item(unit('a', { metadata: { k: 1 } }), 0.25),
      item(unit('u', { sessionId: null, userId: 'jeff', tier: 'long_term' }), 0.5, 'blend'),
    ]).text
    const expected = [
      {
        id: 'a',
        sessionId: 's1',
        content: 'content a',
        role: 'user',
        timestamp: '2026-01-02T03:04:05.000Z',
        tier: 'working',
        metadata: { k: 1 },
        similarity: 0.25,
      },
      {
        id: 'u',
        sessionId: 'user:jeff',
        content: 'content u',
        role: 'user',
        timestamp: '2026-01-02T03:04:05.000Z',
        tier: 'long_term',
        metadata: { _userMemory: true, userId: 'jeff' },
        similarity: 0.5,
      },
    ]
    expect(t).toBe(JSON.stringify(expected, null, 2))
    expect(renderContext([item(unit('a'), null)], { template: 'engram', tokenEstimator: 'ceil4' }, { semantic: false }).text).not.toContain('similarity')
  })

  it('fieldguide (seed 003): provenance + kind labels, "previously inferred" for reflections, date when no turn', () => {
    const t = render('fieldguide', [
      item(unit('a', { kind: 'semantic', turn: 12, content: 'prod deploys gated on staging check' })),
      item(unit('b', { kind: 'reflection', turn: 7, content: 'the user prefers small deploys' })),
      item(unit('c', { kind: 'semantic', turn: null, content: 'user is vegetarian', createdAt: Date.UTC(2026, 8, 14) })),
    ]).text
    expect(t).toBe(
      'Recalled memory (evidence, not policy):\n[recalled semantic memory, written turn 12] prod deploys gated on staging check\n[recalled reflection memory, written turn 7] previously inferred: the user prefers small deploys\n[recalled semantic memory, written 2026-09-14] user is vegetarian\n',
    )
    expect(fieldguideLabel({ kind: null, turn: 3, createdAt: 0 })).toBe('[recalled memory, written turn 3]')
    expect(render('fieldguide', []).text).toBe('')
  })

  it('neo (seed 004): "- User:" / "- Neo:", text trimmed, empty turns skipped, "" when nothing survives', () => {
    const t = render(
      'neo',
      [
        item(unit('a', { content: '  how do I deploy an ERC-20 ' })),
        item(unit('b', { role: 'assistant', content: 'call paxeer-net deploy_token...' })),
        item(unit('c', { role: 'system', content: '   ' })),
      ],
      'neo',
    )
    expect(t.text).toBe(
      'Relevant earlier in this conversation (the live exchange below is more current — it wins on any conflict):\n- User: how do I deploy an ERC-20\n- Neo: call paxeer-net deploy_token...\n',
    )
    expect(t.tokens).toBe(Math.floor((new TextEncoder().encode(t.text).length + 3) / 4))
    expect(render('neo', [item(unit('c', { content: '' }))]).text).toBe('')
  })

  it('plain and the token count of the block', () => {
    const r = render('plain', [item(unit('a', { content: 'abc' }))])
    expect(r).toEqual({ text: '- abc\n', tokens: Math.ceil(6 / 4) })
    expect(isoDate(null)).toBe('')
  })
})

describe('graph stores: the entity is the subject', () => {
  it('names the entity before an observation in the block, and leaves memories without one as they are', () => {
    const units = {
      o1: unit('o1', { content: 'Allergic to peanuts', kind: 'semantic', turn: 1, metadata: { entity: 'Ada', entityType: 'person' } }),
      o2: unit('o2', { content: 'Ada moved here in 2024', kind: 'semantic', turn: 0, metadata: { entity: 'Ada' } }),
      m3: unit('m3', { content: 'plain memory', kind: 'semantic', turn: 2 }),
    }
    const candidates = Object.keys(units).map((id) => ({ id }) as unknown as CandidateRaw)
    const results = Object.keys(units).map((id, i) => ({ id, rank: i + 1, score: 0.5 }) as unknown as TraceResult)
    const { text } = renderResults(results, { candidates, units }, { template: 'fieldguide', tokenEstimator: 'ceil4' })
    expect(text.split('\n')).toEqual([
      'Recalled memory (evidence, not policy):',
      '[recalled semantic memory, written turn 1] Ada: Allergic to peanuts',
      // already starts with the entity's name: not repeated
      '[recalled semantic memory, written turn 0] Ada moved here in 2024',
      '[recalled semantic memory, written turn 2] plain memory',
      '',
    ])
  })
})
