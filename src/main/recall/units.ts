/** The display records of recall units (a memory, or a session with its text) a trace carries. */
import { utf8Length } from '../../shared/scoring'
import type { Memory, Session, UnitInfo } from '../../shared/types'

/**
 * UTF-8 length of a memory's trimmed text, kept per decoded row: the store hands out the same
 * Memory object until its data changes, and an eval measures the same rows for every case.
 */
const textBytesMemo = new WeakMap<Memory, number>()
export function textBytesOf(m: Memory): number {
  let n = textBytesMemo.get(m)
  if (n === undefined) textBytesMemo.set(m, (n = utf8Length(m.content.trim())))
  return n
}

/** A memory as a recall unit: the fields a trace shows beside its scores. */
export function unitOfMemory(m: Memory): UnitInfo {
  return {
    id: m.id,
    content: m.content,
    kind: m.kind,
    role: m.role,
    tier: m.tier,
    sessionId: m.sessionId,
    userId: m.userId,
    agentId: m.agentId,
    createdAt: m.createdAt,
    lastUsedAt: m.lastUsedAt,
    turn: m.turn,
    source: m.source,
    salience: m.salience,
    metadata: m.metadata,
  }
}

/** A session as a recall unit (seed 000's episodes), shown with `content` (its summary or its messages). */
export function unitOfSession(s: Session, content: string): UnitInfo {
  return {
    id: s.id,
    content,
    kind: null,
    role: null,
    tier: s.isArchived ? 'archived' : null,
    sessionId: s.id,
    userId: s.userId,
    agentId: s.agentId,
    createdAt: s.startedAt,
    lastUsedAt: s.endedAt,
    turn: null,
    source: null,
    salience: null,
  }
}
