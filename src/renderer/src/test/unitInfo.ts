import type { UnitInfo } from '../../../shared/types'

/** A semantic long-term memory `id` with the content "memory <id>", for the recall screen's tests. */
export function unitInfo(id: string, createdAt = 0): UnitInfo {
  return {
    id,
    content: `memory ${id}`,
    kind: 'semantic',
    role: null,
    tier: 'long_term',
    sessionId: null,
    userId: null,
    agentId: null,
    createdAt,
    lastUsedAt: null,
    turn: 1,
    source: null,
    salience: 0.5,
  }
}
