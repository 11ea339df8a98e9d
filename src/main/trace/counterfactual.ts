/**
 * The opt-in counterfactual (issue 20 point 5): regenerate an event's decision
 * through a configured chat model with the full context block (the baseline)
 * and with the block minus each returned memory (leave-one-out), and measure how
 * the answer moves. Two halves: `counterfactualPrompts` reads the store (in the
 * job worker: the block is the logged one or re-rendered like trace.event's) and
 * `runCounterfactual` only talks to the chat server (on the main thread: network
 * waits, no store call). Nothing here runs unless the user asks.
 */
import { tokenSimilarity, wordDiff } from '../../shared/evidence'
import { RecallscopeError } from '../../shared/result'
import type { CounterfactualReport, CounterfactualRow } from '../../shared/trace'
import type { ChatMessage, ChatModel } from '../chat/chat'
import type { MemorySource } from '../store/source'
import { decisionText } from './evidence'
import { eventContext, eventDecision, unitsOf, type PrepareOptions } from './event'
import { replayEventFull } from './replay'

/** What the worker hands main: the prompts of every call, built from the store. */
export interface CounterfactualPrompts {
  eventId: string
  original: string | null
  user: string
  variants: { omitted: string | null; rank: number | null; context: string; how: CounterfactualRow['context'] }[]
  skipped: string[]
  notes: string[]
}

/** The instructions before the context block (documented in docs/guide/decision-trace.md). */
const COUNTERFACTUAL_INSTRUCTIONS =
  'You are the assistant in this conversation. Reply to the user’s message as you would next. Use the recalled memory below where it helps; do not mention that it was recalled.'

/** The system message of one call: the instructions, then the context block. */
export function systemPrompt(context: string): string {
  return `${COUNTERFACTUAL_INSTRUCTIONS}\n\n${context.trim() === '' ? '(nothing was recalled)' : context}`
}

/**
 * The logged block with a memory's text cut out: the line(s) holding its text are removed.
 * Null when the text is not in the block (edited since, or rendered differently).
 */
export function cutFromBlock(block: string, text: string): string | null {
  const t = text.trim()
  if (t === '') return null
  const at = block.indexOf(t)
  if (at === -1) return null
  const start = block.lastIndexOf('\n', at) + 1
  const nl = block.indexOf('\n', at + t.length)
  const end = nl === -1 ? block.length : nl + 1
  return (block.slice(0, start) + block.slice(end)).replace(/\n{3,}/g, '\n\n')
}

/** Build every call's context: the baseline and one per returned memory (at most `maxMemories`). */
export async function counterfactualPrompts(
  store: MemorySource,
  eventId: string,
  opts: PrepareOptions & { maxMemories?: number } = {},
): Promise<CounterfactualPrompts> {
  const { replay, run } = await replayEventFull(store, eventId, { ...opts, mode: 'logged' })
  const e = run.event
  const user = e.query ?? e.cue?.currentStep ?? ''
  if (user.trim() === '') throw new RecallscopeError('BAD_INPUT', `Event ${eventId} has no query to regenerate an answer to`)
  const ids = e.results.map((r) => r.id)
  const units = unitsOf(store, ids, run.config.unit, replay.trace)
  const base = eventContext(e, run.config, run.extras, replay.trace, units)
  const notes: string[] = []
  const max = opts.maxMemories ?? 10
  const variants: CounterfactualPrompts['variants'] = [
    { omitted: null, rank: null, context: base.text, how: base.source === 'logged' ? 'logged' : 'rerendered' },
  ]
  ids.slice(0, max).forEach((id, i) => {
    const content = units.get(id)?.content ?? null
    const cut = base.source === 'logged' && content ? cutFromBlock(base.text, content) : null
    if (cut !== null) return variants.push({ omitted: id, rank: i + 1, context: cut, how: 'logged-cut' })
    const without = { ...e, results: e.results.filter((r) => r.id !== id) }
    const ctx = eventContext(without, run.config, { ...run.extras, context: null }, replay.trace, units)
    variants.push({ omitted: id, rank: i + 1, context: ctx.text, how: 'rerendered' })
  })
  if (base.source === 'logged' && variants.some((v) => v.how === 'rerendered'))
    notes.push('some memories’ text is not in the logged block (edited since?): their leave-one-out blocks are re-rendered from the logged results')
  if (base.source !== 'logged') notes.push('this log stores no context block: every block is re-rendered from the logged results with today’s memory text')
  const skipped = ids.slice(max)
  if (skipped.length) notes.push(`only the first ${max} returned memories are left out (${skipped.length} more not tried: raise maxMemories)`)
  const decision = eventDecision(e, run.extras)
  if (!decision) notes.push('the event records no decision: answers are compared with the baseline only')
  return { eventId, original: decision ? decisionText(decision) : null, user, variants, skipped, notes }
}

/** Run the calls one after another (baseline first), with progress and cancel between calls. */
export async function runCounterfactual(
  chat: ChatModel,
  p: CounterfactualPrompts,
  ctl: { signal?: AbortSignal; progress?: (done: number, total: number, message?: string) => void } = {},
): Promise<CounterfactualReport> {
  const t0 = performance.now()
  const total = p.variants.length
  let promptTokens: number | null = null
  let completionTokens: number | null = null
  const add = (a: number | null, b: number | null) => (b === null ? a : (a ?? 0) + b)
  const answers: { v: CounterfactualPrompts['variants'][number]; text: string; ms: number }[] = []
  for (const v of p.variants) {
    if (ctl.signal?.aborted) throw new RecallscopeError('CANCELLED', 'Cancelled')
    ctl.progress?.(answers.length, total, v.omitted ? `without ${v.omitted}` : 'baseline (full context)')
    const messages: ChatMessage[] = [
      { role: 'system', content: systemPrompt(v.context) },
      { role: 'user', content: p.user },
    ]
    const a = await chat.complete(messages, { signal: ctl.signal })
    promptTokens = add(promptTokens, a.promptTokens)
    completionTokens = add(completionTokens, a.completionTokens)
    answers.push({ v, text: a.text, ms: a.ms })
  }
  ctl.progress?.(total, total)
  const baseText = answers[0].text
  const row = (x: (typeof answers)[number]): CounterfactualRow => ({
    omitted: x.v.omitted,
    rank: x.v.rank,
    text: x.text,
    ms: x.ms,
    vsOriginal: p.original !== null ? tokenSimilarity(p.original, x.text) : null,
    vsBaseline: x.v.omitted === null ? null : tokenSimilarity(baseText, x.text),
    diff: x.v.omitted === null ? null : wordDiff(baseText, x.text),
    context: x.v.how,
  })
  return {
    eventId: p.eventId,
    chat: { spec: chat.spec, model: chat.model, host: chat.host },
    original: p.original,
    prompt: { system: systemPrompt(p.variants[0].context), user: p.user },
    baseline: row(answers[0]),
    rows: answers.slice(1).map(row),
    skipped: p.skipped,
    calls: answers.length,
    promptTokens,
    completionTokens,
    tookMs: performance.now() - t0,
    notes: p.notes,
  }
}
