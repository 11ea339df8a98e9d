import { describe, expect, it } from 'vitest'
import type { UnitInfo } from '../../../../shared/types'
import { collectExport, listSource } from '../../lib/exportTable'
import { candidatesExport } from './candidatesExport'
import { toRows } from './ResultsList'

const f = (similarity: number, lexical: number, recency: number, salience: number) => ({ similarity, lexical, recency, salience })
const unit = (id: string, content: string): UnitInfo => ({
  id,
  content,
  kind: 'semantic',
  role: null,
  tier: null,
  sessionId: 's1',
  userId: null,
  agentId: null,
  createdAt: null,
  lastUsedAt: null,
  turn: null,
  source: null,
  salience: null,
})

describe('candidates export', () => {
  // one injected, one dropped by the floor, ranked by score before the gates
  const rows = toRows(
    [{ id: 'm1', rank: 1, score: 0.9, features: f(0.8, 0.5, 0.2, 0.1), contributions: f(0.5, 0.2, 0.1, 0.1), tokens: 12, scoreRank: 1 }],
    [{ id: 'm2', score: 0.3, features: f(0.2, 0, 0.1, 0.5), contributions: f(0.1, 0, 0.05, 0.15), gate: 'floor', tokens: 7, scoreRank: 2 }],
  )
  const units = { m1: unit('m1', 'deploy, then "verify"'), m2: unit('m2', '=cmd') }

  it('writes injected and dropped candidates with their gate, features and text', async () => {
    const { parts } = await collectExport(candidatesExport(units), 'csv', listSource(rows))
    const lines = parts.join('').split('\r\n')
    expect(lines[0]).toBe(
      'score_rank,rank,id,status,score,similarity,lexical,recency,salience,similarity_contribution,lexical_contribution,recency_contribution,salience_contribution,tokens,kind,session_id,content',
    )
    expect(lines[1]).toBe('1,1,m1,injected,0.9,0.8,0.5,0.2,0.1,0.5,0.2,0.1,0.1,12,semantic,s1,"deploy, then ""verify"""')
    // the dropped one: no rank, its gate, and its formula-like text guarded
    expect(lines[2]).toBe("2,,m2,dropped: floor,0.3,0.2,0,0.1,0.5,0.1,0,0.05,0.15,7,semantic,s1,'=cmd")
    expect(lines[3]).toBe('')
  })

  it('JSONL keeps the row and adds its text', async () => {
    const { parts } = await collectExport(candidatesExport(units), 'jsonl', listSource(rows))
    const objs = parts
      .join('')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { id: string; gate: string | null; content: string })
    expect(objs.map((o) => [o.id, o.gate, o.content])).toEqual([
      ['m1', null, 'deploy, then "verify"'],
      ['m2', 'floor', '=cmd'],
    ])
  })
})
