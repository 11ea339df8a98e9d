/** What the demo generator, its recall events and its eval cases share. */

export interface DemoContext {
  seed: number
  end: number
  sessions: DemoSession[]
  rng: () => number
}

/** What the generator knows is true: each (agent, user, topic)'s extracted knowledge, for demo eval cases. */
export interface DemoTruth {
  agentId: string
  userId: string
  topic: string
  question: string
  knowledge: { id: string; kind: string }[]
}

export interface DemoSession {
  id: string
  agentId: string
  userId: string
  tenantId: string
  topic: string
  startedAt: number
  endedAt: number
  memoryIds: string[]
  /** (id, created_at, turn, role, text) of user turns, for event generation */
  userTurns: { id: string; at: number; turn: number; text: string }[]
}
