/**
 * The demo memory DB: three agents, eight users, ~120 sessions over 90 days,
 * ~6,000 memories of every kind and tier, session summaries, embeddings from the
 * offline hashing embedder, and the recall events an agent would have logged.
 * Deterministic: the same seed gives the same bytes of content on every machine.
 * `memories` scales it (1,000,000 works; sessions grow with it).
 */
import { mulberry32 } from '../../shared/random'
import { hashEmbed, HASHING_MODEL } from '../embed/hashing'
import { addDemoEvents } from './events'
import {
  ASSISTANT_CLOSERS,
  ASSISTANT_OPENERS,
  DEMO_AGENTS,
  DEMO_USERS,
  dress,
  fill,
  id,
  pick,
  SLOTS,
  USER_CLOSERS,
  USER_OPENERS,
  type AgentDef,
  type Topic,
} from './corpus'
import type { DemoContext, DemoSession, DemoTruth } from './types'

export type { DemoContext } from './types'
import { writeDemoCases } from './cases'

import { CanonicalWriter, type CanonicalMemoryRow } from '../store/sqlite/canonicalWriter'

export interface DemoOptions {
  out: string
  /** @default 7 */
  seed?: number
  /** @default 6000 */
  memories?: number
  force?: boolean
  /** Progress callback (done, total); return false to cancel. */
  onProgress?: (done: number, total: number) => boolean | void
  /**
   * Adds recall events once memories, embeddings and the FTS index are committed
   * (`w.db.name` is the half-written file, readable through a Store).
   * @default addDemoEvents (recall/demoEvents.ts): a few hundred events computed by the recall engine
   */
  addEvents?: (w: CanonicalWriter, ctx: DemoContext) => void
  /** Write recall events at all. @default true */
  events?: boolean
  /** Write judged eval cases into the DB's workspace (`<out>.recallscope`). @default true */
  cases?: boolean
}

/** All demo data ends here (fixed, so output is deterministic). 2026-10-31T18:00:00Z */
export const DEMO_END = Date.UTC(2026, 9, 31, 18, 0, 0)
const DAY = 86_400_000

type DemoUser = (typeof DEMO_USERS)[number]
interface DemoPair {
  agent: AgentDef
  user: DemoUser
}

/** What every phase of one generation run shares: the writer, the one seeded RNG and the running counters. */
interface DemoRun {
  w: CanonicalWriter
  /** The single RNG stream: phases must draw from it in the original order, or the seed gives another DB. */
  rng: () => number
  target: number
  onProgress?: DemoOptions['onProgress']
  truth: Map<string, DemoTruth>
  /** Last memory number handed out; ids run on from sessions into user facts. */
  memN: number
  /** Memories written so far (drives checkpoints and progress). */
  written: number
}

/** What one session's turns share. */
interface SessionPlan {
  pair: DemoPair
  topic: Topic
  /** Slot values fixed for the session, so its turns talk about the same things. */
  fixed: Record<string, string>
  ageDays: number
  archived: boolean
  session: DemoSession
}

/** What one turn says, before it becomes a memory row. */
interface TurnContent {
  role: string
  kind: string
  text: string
  salience: number
}

/** Generate the demo DB. Returns the path written and what it contains. */
export function generateDemo(opts: DemoOptions): { path: string; memories: number; sessions: number; events: number; cases: number } {
  const seed = opts.seed ?? 7
  const target = Math.max(50, Math.floor(opts.memories ?? 6000))
  const rng = mulberry32(seed)
  const w = new CanonicalWriter(opts.out, { force: opts.force })
  try {
    const run: DemoRun = { w, rng, target, onProgress: opts.onProgress, truth: new Map(), memN: 0, written: 0 }
    const nSessions = Math.max(2, Math.round(target / 50))
    // Longer histories for huge DBs would be unrealistic; keep 90 days, denser.
    const start = DEMO_END - 90 * DAY
    const pairs = listDemoPairs()
    const sessions = writeDemoSessions(run, pairs, nSessions, start)
    writeUserFacts(run, pairs, start)
    const before = w.eventCount()
    const withEvents = opts.events !== false
    if (withEvents) {
      // Events are computed by the recall engine over this very file, so it needs the FTS index now.
      w.prepareForReads()
      ;(opts.addEvents ?? addDemoEvents)(w, { seed, end: DEMO_END, sessions, rng })
    }
    const events = w.eventCount() - before
    opts.onProgress?.(target, target)
    const p = w.finish({ fts: !withEvents })
    const cases = opts.cases === false ? 0 : writeDemoCases(p, [...run.truth.values()], DEMO_END + 60_000)
    return { path: p, memories: run.written, sessions: sessions.length, events, cases }
  } catch (e) {
    w.abort()
    throw e
  }
}

/** Every (agent, user) pair the demo users talk to, in corpus order. */
function listDemoPairs(): DemoPair[] {
  const pairs: DemoPair[] = []
  for (const u of DEMO_USERS) for (const a of u.agents) pairs.push({ agent: DEMO_AGENTS.find((x) => x.id === a)!, user: u })
  return pairs
}

/** Record a knowledge memory as the truth for its (agent, user, topic): the judged demo cases expect it recalled. */
function recordTruth(run: DemoRun, agentId: string, userId: string, topic: Topic, id: string, kind: string): void {
  const key = `${agentId}|${userId}|${topic.name}`
  let t = run.truth.get(key)
  if (!t) run.truth.set(key, (t = { agentId, userId, topic: topic.name, question: topic.question, knowledge: [] }))
  t.knowledge.push({ id, kind })
}

/** Write all sessions (memories, summary, embeddings), spreading the memory budget left after the user facts. */
function writeDemoSessions(run: DemoRun, pairs: DemoPair[], nSessions: number, start: number): DemoSession[] {
  const { rng } = run
  const starts = Array.from({ length: nSessions }, () => start + Math.floor(rng() * (90 * DAY - 2 * 3600_000))).sort((a, b) => a - b)
  // Cross-session user facts (Engram's user_memories): user_id set, session_id NULL.
  const userFacts = pairs.length * 4
  const sessionBudget = run.target - userFacts
  const sessions: DemoSession[] = []
  for (let si = 0; si < nSessions; si++) {
    sessions.push(writeDemoSession(run, pairs, si, starts[si], nSessions - si, sessionBudget - run.written))
  }
  return sessions
}

/** Write one session: plan it, write its turns, then its row and summary embedding. */
function writeDemoSession(run: DemoRun, pairs: DemoPair[], si: number, startedAt: number, remainingSessions: number, left: number): DemoSession {
  const { rng, w } = run
  const pair = pairs[Math.floor(rng() * pairs.length)]
  const topic = pick(rng, pair.agent.topics)
  const fixed: Record<string, string> = {}
  for (const k of Object.keys(SLOTS)) fixed[k] = pick(rng, SLOTS[k])
  const sid = id('s', si + 1)
  const count =
    remainingSessions === 1
      ? Math.max(1, left)
      : Math.max(4, Math.min(Math.round(left / remainingSessions + (rng() - 0.5) * 20), left - (remainingSessions - 1) * 4))
  const ageDays = (DEMO_END - startedAt) / DAY
  const archived = ageDays > 75 && rng() < 0.4
  const session: DemoSession = {
    id: sid,
    agentId: pair.agent.id,
    userId: pair.user.id,
    tenantId: pair.user.tenant,
    topic: topic.name,
    startedAt,
    endedAt: startedAt,
    memoryIds: [],
    userTurns: [],
  }
  const plan: SessionPlan = { pair, topic, fixed, ageDays, archived, session }
  let t = startedAt
  for (let turn = 1; turn <= count; turn++) {
    t += 20_000 + Math.floor(rng() * 160_000)
    writeTurn(run, plan, turn, t)
  }
  session.endedAt = t
  const summary = fill(rng, topic.summary, fixed)
  w.session({
    id: sid,
    agent_id: pair.agent.id,
    user_id: pair.user.id,
    tenant_id: pair.user.tenant,
    started_at: startedAt,
    ended_at: t,
    summary,
    is_archived: archived ? 1 : 0,
  })
  w.embedding('session', sid, HASHING_MODEL, hashEmbed(summary))
  return session
}

/** Write one turn of a session as a memory with its embedding; checkpoint and report progress every 20,000 rows. */
function writeTurn(run: DemoRun, plan: SessionPlan, turn: number, t: number): void {
  const { rng, w } = run
  const { pair, topic, session: s } = plan
  const mid = id('m', ++run.memN)
  const { role, kind, text, salience } = composeTurn(rng, topic, plan.fixed)
  const tier = chooseTier(rng, plan.archived, plan.ageDays, kind)
  const used = rng() < 0.35
  const lastUsed = used ? Math.min(DEMO_END, t + Math.floor(rng() * (DEMO_END - t))) : null
  let metadata: string | null = JSON.stringify({ topic: topic.name, channel: pair.agent.id === 'agent-helpdesk' ? 'chat' : 'app' })
  // A realistic DB has a little junk: a few rows with broken metadata JSON.
  if (run.memN % 1999 === 7) metadata = '{"topic": "' + topic.name + '", broken'
  const row: CanonicalMemoryRow = {
    id: mid,
    agent_id: pair.agent.id,
    user_id: pair.user.id,
    session_id: s.id,
    role,
    kind,
    tier,
    content: text,
    summary: null,
    salience: Math.round(salience * 1000) / 1000,
    created_at: t,
    last_used_at: lastUsed,
    use_count: used ? 1 + Math.floor(rng() * 6) : 0,
    turn,
    source: `${pair.agent.id}/${topic.name}`,
    metadata,
  }
  w.memory(row)
  if (run.memN % 2503 === 11) {
    // …and a vector of the wrong dimension, which must be skipped and counted.
    w.embedding('memory', mid, HASHING_MODEL, hashEmbed(text, 128))
  } else {
    w.embedding('memory', mid, HASHING_MODEL, hashEmbed(text))
  }
  s.memoryIds.push(mid)
  // Archived knowledge is out of a default recall's reach: the demo's judged cases leave it out.
  if (kind !== 'episodic' && tier !== 'archived') recordTruth(run, pair.agent.id, pair.user.id, topic, mid, kind)
  if (role === 'user') s.userTurns.push({ id: mid, at: t, turn, text })
  run.written++
  if (run.written % 20000 === 0) {
    w.checkpoint()
    if (run.onProgress?.(run.written, run.target) === false) throw new Error('cancelled')
  }
}

/** Pick what a turn is and say it. Mostly dialogue, with the facts, procedures and reflections an agent extracts. */
function composeTurn(rng: () => number, topic: Topic, fixed: Record<string, string>): TurnContent {
  const r = rng()
  if (r < 0.36) {
    const text = dress(rng, fill(rng, pick(rng, topic.userLines), fixed), USER_OPENERS, USER_CLOSERS)
    return { role: 'user', kind: 'episodic', text, salience: 0.2 + rng() * 0.3 }
  }
  if (r < 0.72) {
    const text = dress(rng, fill(rng, pick(rng, topic.assistantLines), fixed), ASSISTANT_OPENERS, ASSISTANT_CLOSERS)
    return { role: 'assistant', kind: 'episodic', text, salience: 0.15 + rng() * 0.3 }
  }
  if (r < 0.86) {
    const text = fill(rng, pick(rng, topic.facts), fixed)
    return { role: 'system', kind: 'semantic', text, salience: 0.5 + rng() * 0.5 }
  }
  if (r < 0.94) {
    const text = fill(rng, pick(rng, topic.procedures), fixed)
    return { role: 'system', kind: 'procedural', text, salience: 0.4 + rng() * 0.5 }
  }
  const text = fill(rng, pick(rng, topic.reflections), fixed)
  return { role: 'assistant', kind: 'reflection', text, salience: 0.3 + rng() * 0.5 }
}

/**
 * A memory's tier. Recent sessions are working memory, older ones consolidated.
 * The RNG is drawn only for old episodic turns of live sessions (the seeded stream depends on it).
 */
function chooseTier(rng: () => number, archived: boolean, ageDays: number, kind: string): string {
  if (archived) return 'archived'
  if (ageDays < 14) return kind === 'episodic' ? 'working' : 'long_term'
  return kind === 'episodic' && rng() < 0.6 ? 'working' : 'long_term'
}

/** Write four cross-session facts per (agent, user) pair: no session, long-term, from the user's profile. */
function writeUserFacts(run: DemoRun, pairs: DemoPair[], start: number): void {
  const { rng, w } = run
  for (const { agent, user } of pairs) {
    for (let i = 0; i < 4; i++) {
      const topic = pick(rng, agent.topics)
      const text = fill(rng, pick(rng, topic.facts), {})
      const mid = id('m', ++run.memN)
      const at = start + Math.floor(rng() * 90 * DAY)
      w.memory({
        id: mid,
        agent_id: agent.id,
        user_id: user.id,
        session_id: null,
        role: 'system',
        kind: 'semantic',
        tier: 'long_term',
        content: text,
        summary: null,
        salience: Math.round((0.6 + rng() * 0.4) * 1000) / 1000,
        created_at: at,
        last_used_at: null,
        use_count: 0,
        turn: null,
        source: 'user-profile',
        metadata: JSON.stringify({ topic: topic.name, scope: 'user' }),
      })
      w.embedding('memory', mid, HASHING_MODEL, hashEmbed(text))
      recordTruth(run, agent.id, user.id, topic, mid, 'semantic')
      run.written++
    }
  }
}
