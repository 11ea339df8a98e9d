/** The optional `decision` column: what is read, and what is unusable (read as none, never an error). */
import { describe, expect, it } from 'vitest'
import { decodeDecision } from './events'

describe('decodeDecision', () => {
  it('reads a message, a tool call (object arguments kept as JSON), a time and a source', () => {
    expect(decodeDecision('{"text":"Use the rollback plan.","at":1700000000000}')).toEqual({
      text: 'Use the rollback plan.',
      toolCall: null,
      at: 1700000000000,
      via: 'assistant message',
    })
    expect(decodeDecision('{"toolCall":{"name":"create_ticket","arguments":{"title":"x"}},"at":"2026-01-02T03:04:05Z","via":"tool call"}')).toEqual({
      text: null,
      toolCall: { name: 'create_ticket', arguments: '{"title":"x"}' },
      at: Date.UTC(2026, 0, 2, 3, 4, 5),
      via: 'tool call',
    })
  })
  it('anything else is no decision', () => {
    for (const bad of ['not json', '[]', '"text"', '{"text":"  "}', '{"toolCall":{"arguments":"x"}}', '{}', 42]) expect(decodeDecision(bad)).toBeNull()
  })
})
