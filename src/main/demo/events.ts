/**
 * The recall events a demo agent would have logged: a few hundred recalls at
 * user turns, each computed by this engine at the event's own time (`at`,
 * just before the user turn is stored) on the demo data, with the preset, the
 * FULL config and the results in injected order. A replay of any event at its
 * `at` with its logged config and the hashing embedder gives the same results
 * and scores (recall/demoEvents.test.ts checks every one).
 *
 * Which agent logs what (one preset per agent, like a real deployment):
 *  - agent-coder      fieldguide with a seed-003 cue (portal-semantic 1 in 4);
 *  - agent-concierge  engram, the session plus the user's cross-session facts;
 *  - agent-helpdesk   neo, deduped against the live transcript (last 16 turns);
 *  - the first user turn of a coder/concierge session: portal-episodic
 *    (past sessions of this agent + user).
 */
import crypto from 'node:crypto'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { armTexts } from '../../shared/cue'
import { getPreset } from '../../shared/presets'
import type { Cue, PresetName, RecallConfig, RecallScope } from '../../shared/types'
import { HASHING_MODEL, hashEmbed } from '../embed/hashing'
import type { DemoContext } from './types'
import { openSource } from '../store/registry'

import type { VectorIndex } from '../store/vectors/vectorIndex'
import type { CanonicalEventRow, CanonicalWriter } from '../store/sqlite/canonicalWriter'
import { runRecallSync } from '../recall/engine'

export interface DemoEventOptions {
  /** About how many events. @default 240 */
  target?: number
}

interface Planned {
  at: number
  session: DemoContext['sessions'][number]
  turnIndex: number
  preset: PresetName
}

/** The live transcript Neo keeps verbatim (seed 004: "the 16-turn resume seed"). */
const LIVE_TURNS = 16

/**
 * Compute and write the events. `w` must hold every memory, session, embedding
 * and the FTS index, committed (generateDemo does that before calling).
 * Returns the number of events written.
 */
export function addDemoEvents(w: CanonicalWriter, ctx: DemoContext, opts: DemoEventOptions = {}): number {
  const plan = planEvents(ctx, opts.target ?? 240)
  if (plan.length === 0) return 0
  // Read the half-written DB through a real MemorySource (read-only connection, throwaway workspace).
  const wsPath = path.join(os.tmpdir(), `recallscope-demo-${crypto.randomUUID()}.recallscope`)
  const store = openSource({ path: w.db.name, workspacePath: wsPath })
  const rows: CanonicalEventRow[] = []
  // The file does not change while events are computed: load each vector index once.
  const indexes = new Map<string, VectorIndex>()
  const vectors = (model: string, owner: 'memory' | 'session') => {
    const key = `${owner}:${model}`
    let idx = indexes.get(key)
    if (!idx) indexes.set(key, (idx = store.vectors(model, owner)))
    return idx
  }
  try {
    const summaries = new Map<string, string | null>()
    for (const s of store.getSessions([...new Set(plan.map((p) => p.session.id))]).values()) summaries.set(s.id, s.summary)
    plan.forEach((p, n) => {
      const s = p.session
      const turn = s.userTurns[p.turnIndex]
      const base = getPreset(p.preset).config
      const scope: RecallScope = { ...base.scope, agentId: s.agentId }
      let cue: Cue | null = null
      if (p.preset === 'fieldguide') {
        scope.userId = s.userId
        const prev = p.turnIndex > 0 ? s.userTurns[p.turnIndex - 1].text : null
        cue = { goal: summaries.get(s.id) ?? s.topic, currentStep: turn.text, openQuestions: prev ? [prev] : [] }
      } else if (p.preset === 'portal-semantic') scope.tenantId = s.tenantId
      else if (p.preset === 'portal-episodic') scope.userId = s.userId
      else if (p.preset === 'engram') {
        scope.sessionId = s.id
        scope.blendUserId = s.userId
      } else if (p.preset === 'neo') {
        scope.sessionId = s.id
        const at = s.memoryIds.indexOf(turn.id)
        scope.excludeIds = s.memoryIds.slice(Math.max(0, at - LIVE_TURNS), at)
      }
      const config: RecallConfig = { ...base, model: HASHING_MODEL, scope }
      const texts = armTexts(turn.text, cue, config.cueUse)
      const trace = runRecallSync(store, { text: turn.text, cue }, config, p.at, {
        preset: p.preset,
        // Fetch exactly the pool: the results are the same, the trace is not kept.
        depth: config.candidatePool,
        vectors,
        prepared: { vector: hashEmbed(texts.dense), embedder: { name: 'hashing', model: HASHING_MODEL, available: true }, reason: null, embedMs: 0 },
      })
      rows.push({
        id: `ev-${(n + 1).toString(36).padStart(5, '0')}`,
        at: p.at,
        agent_id: s.agentId,
        user_id: s.userId,
        session_id: s.id,
        turn: turn.turn,
        query: turn.text,
        cue: cue ? JSON.stringify(cue) : null,
        preset: p.preset,
        config: JSON.stringify(trace.config),
        results: JSON.stringify(trace.results.map((r) => ({ id: r.id, score: r.score }))),
        decision: JSON.stringify(
          demoDecision(
            splitmix((ctx.seed * 7919 + n * 104_729) >>> 0),
            s.agentId,
            turn.text,
            trace.results.map((r) => ({ text: trace.units[r.id]?.content ?? '', role: trace.units[r.id]?.role ?? null })),
            p.at,
          ),
        ),
      })
    })
  } finally {
    store.close()
    for (const suffix of ['', '-wal', '-shm']) fs.rmSync(wsPath + suffix, { force: true })
  }
  for (const r of rows) w.event(r)
  return rows.length
}

const OPENERS = ['From what I have on file, ', 'Going by our earlier notes, ', 'Based on what you told me before, ', 'As I recall, ']
const CLOSERS = ['Shall I go ahead?', 'Tell me if that changed.', 'I will proceed on that basis.', '']

/** The first sentence of a memory, without its trailing full stop. */
function firstSentence(text: string): string {
  const t = text.trim().split(/(?<=[.!?])\s+/)[0] ?? ''
  return t.replace(/[.!?]+$/, '')
}

/**
 * The agent's next message after a recall, written from what it recalled (the demo's
 * `decision` column): mostly built on ONE injected memory (not a user turn, when there is another)
 * — the first such 60 % of the time, else
 * another — sometimes a second, so the attribution has a real answer to find. The coder agent
 * files a ticket instead 1 time in 5 (a tool call). Nothing recalled: it asks.
 */
function demoDecision(
  rng: () => number,
  agentId: string,
  query: string,
  injected: { text: string; role: string | null }[],
  at: number,
): { text?: string; toolCall?: { name: string; arguments: string }; at: number; via: string } {
  const when = at + 800 + Math.floor(rng() * 6000)
  const usable = injected.filter((m) => m.text.trim() !== '')
  // An agent answers from what it knows (facts, procedures, its own replies) before echoing the user's words back.
  const known = usable.filter((m) => m.role !== 'user')
  const texts = (known.length ? known : usable).map((m) => m.text)
  if (texts.length === 0)
    return { text: `I have nothing saved about that yet. Could you tell me more about "${query.slice(0, 80)}"?`, at: when, via: 'assistant message' }
  const main = rng() < 0.6 ? 0 : Math.floor(rng() * texts.length)
  const primary = firstSentence(texts[main])
  if (agentId === 'agent-coder' && rng() < 0.2)
    return {
      toolCall: { name: 'create_ticket', arguments: JSON.stringify({ title: query.slice(0, 80), notes: primary }) },
      at: when,
      via: 'tool call',
    }
  let text = `${OPENERS[Math.floor(rng() * OPENERS.length)]}${primary.charAt(0).toLowerCase()}${primary.slice(1)}.`
  if (texts.length > 1 && rng() < 0.4) {
    const other = (main + 1 + Math.floor(rng() * (texts.length - 1))) % texts.length
    text += ` Also: ${firstSentence(texts[other])}.`
  }
  const closer = CLOSERS[Math.floor(rng() * CLOSERS.length)]
  return { text: closer ? `${text} ${closer}` : text, at: when, via: 'assistant message' }
}

/** Pick user turns (deterministically, spread over every session) and the preset each agent uses. */
function planEvents(ctx: DemoContext, target: number): Planned[] {
  const rng = splitmix((ctx.seed ^ 0x5eede7e1) >>> 0)
  let total = 0
  for (const s of ctx.sessions) total += s.userTurns.length
  if (total === 0 || target <= 0) return []
  const p = Math.min(1, target / total)
  const out: Planned[] = []
  for (const s of ctx.sessions) {
    s.userTurns.forEach((t, i) => {
      if (rng() >= p) return
      let preset: PresetName
      if (s.agentId === 'agent-helpdesk') preset = 'neo'
      else if (i === 0) preset = 'portal-episodic'
      else if (s.agentId === 'agent-concierge') preset = 'engram'
      else preset = rng() < 0.25 ? 'portal-semantic' : 'fieldguide'
      // The agent recalls as the message arrives, before storing it.
      out.push({ at: t.at - 1, session: s, turnIndex: i, preset })
    })
  }
  return out
}

/** A small seeded PRNG of our own (the generator's stream stays untouched). */
function splitmix(seed: number): () => number {
  let a = seed >>> 0
  return () => {
    a = (a + 0x9e3779b9) >>> 0
    let t = a ^ (a >>> 16)
    t = Math.imul(t, 0x21f0aaad)
    t ^= t >>> 15
    t = Math.imul(t, 0x735a2d97)
    t ^= t >>> 15
    return (t >>> 0) / 4294967296
  }
}
