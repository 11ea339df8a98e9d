/**
 * The full context window (issue 12): everything the agent would send, in seed
 * 001's order — the system prompt the user pastes, the recall's context block
 * (retrieved knowledge, as the Recall screen shows it), the episode snippets of
 * seed 000's episodic recall (its own preset and template), the session's
 * message history pruned to what is left of the window, and the current
 * message — each with its tokens against the window. What a budget cut is shown
 * greyed.
 */
import { useMemo, useState } from 'react'
import type { RecallConfig, RecallTrace, TraceResult } from '../../../../shared/types'
import { renderResults } from '../../../../shared/render'
import { call } from '../../lib/api'
import { useAsync } from '../../lib/useAsync'
import { assembleWindow, type BlockKey } from './assemble'
import './context.css'

const SIZES = [
  { label: '4k', tokens: 4096 },
  { label: '8k', tokens: 8192 },
  { label: '32k', tokens: 32768 },
  { label: '128k', tokens: 131072 },
]

const BLOCK_COLOR: Record<BlockKey, string> = {
  system: 'var(--muted)',
  knowledge: 'var(--accent)',
  episodes: 'var(--ok)',
  history: 'var(--warn)',
  current: 'var(--danger)',
}

export interface ContextWindowProps {
  trace: RecallTrace
  /** what the Recall screen shows now (after local re-ranks) */
  view: { results: TraceResult[]; dropped: RecallTrace['dropped']; context: string; contextTokens: number }
  config: RecallConfig
  query: string
  embedder: string | null
}

export function ContextWindow({ trace, view, config, query, embedder }: ContextWindowProps) {
  const [systemPrompt, setSystemPrompt] = useState('')
  const [size, setSize] = useState<number | 'custom'>(8192)
  const [custom, setCustom] = useState(16000)
  const [pickedSession, setPickedSession] = useState<string>('')
  const windowTokens = size === 'custom' ? custom : size
  const scope = config.scope
  const now = trace.now

  // [3] Episode snippets: seed 000's episodic recall (its preset, its template) for the same query, agent and user.
  const episodeScope = { agentId: scope.agentId, userId: scope.userId, tenantId: scope.tenantId }
  const episodes = useAsync(
    () => call('recall.run', { query, now, embedder: embedder ?? undefined, preset: 'portal-episodic', config: { scope: episodeScope } }),
    [query, now, embedder, JSON.stringify(episodeScope)],
    { enabled: query.trim() !== '' },
  )

  // [4] Message history: the scope's session, or one the user picks.
  const sessions = useAsync(() => call('sessions.page', { agentId: scope.agentId, userId: scope.userId, limit: 50 }), [scope.agentId, scope.userId], {
    enabled: !scope.sessionId,
  })
  const sessionId = scope.sessionId ?? (pickedSession || sessions.data?.rows[0]?.id || '')
  const messages = useAsync(() => call('memories.page', { sessionId, sort: 'turn', dir: 'asc', before: now, limit: 1000 }), [sessionId, now], {
    enabled: sessionId !== '',
  })

  // What the recall's token budget dropped, rendered by the same template as the block (greyed below it).
  const knowledgeCut = useMemo(() => {
    const cut = view.dropped.filter((d) => d.gate === 'budget').map((d, k) => ({ ...d, rank: k + 1 }))
    if (cut.length === 0) return []
    const r = renderResults(cut, trace, config)
    return r.text ? [{ text: r.text, tokens: r.tokens }] : []
  }, [view.dropped, trace, config])

  const plan = useMemo(
    () =>
      assembleWindow({
        systemPrompt,
        knowledge: {
          text: view.context,
          tokens: view.contextTokens,
          cut: knowledgeCut,
          note:
            view.context === ''
              ? 'Nothing recalled (the recall injects nothing for this query).'
              : `Template ${config.template}: the Recall screen’s context block.`,
        },
        episodes: episodes.data
          ? {
              text: episodes.data.context,
              tokens: episodes.data.contextTokens,
              note:
                episodes.data.context === ''
                  ? `No episode passed seed 000’s recall${episodes.data.degradedReason ? ` (${episodes.data.degradedReason})` : ''}.`
                  : `Seed 000 episodic recall (preset portal-episodic): ${episodes.data.results.length} session${episodes.data.results.length === 1 ? '' : 's'}.`,
            }
          : { text: '', tokens: 0, note: episodes.error ? `Episodic recall failed: ${episodes.error.message}` : episodes.loading ? 'Loading…' : 'No query.' },
        history: (messages.data?.rows ?? []).map((m) => ({ role: m.role, content: m.content })),
        historyNote: sessionId
          ? `Session ${sessionId}: ${messages.data?.rows.length ?? 0} turn${messages.data?.rows.length === 1 ? '' : 's'} at or before the recall’s time, oldest cut first.`
          : 'No session in scope.',
        current: query,
        window: windowTokens,
        estimator: config.tokenEstimator,
      }),
    [
      systemPrompt,
      view.context,
      view.contextTokens,
      knowledgeCut,
      config.template,
      config.tokenEstimator,
      episodes.data,
      episodes.error,
      episodes.loading,
      messages.data,
      sessionId,
      query,
      windowTokens,
    ],
  )

  return (
    <section className="cw" aria-label="Full context window">
      <div className="cw-controls row">
        <label className="selectfield">
          <span className="small muted">Model window</span>
          <select value={String(size)} onChange={(e) => setSize(e.target.value === 'custom' ? 'custom' : Number(e.target.value))} aria-label="Model window">
            {SIZES.map((s) => (
              <option key={s.tokens} value={s.tokens}>
                {s.label} ({s.tokens.toLocaleString('en-US')} tokens)
              </option>
            ))}
            <option value="custom">custom…</option>
          </select>
        </label>
        {size === 'custom' && (
          <label className="selectfield">
            <span className="small muted">Tokens</span>
            <input
              type="number"
              min={1}
              max={10_000_000}
              value={custom}
              onChange={(e) => setCustom(Math.max(1, Math.min(10_000_000, Math.floor(Number(e.target.value)) || 1)))}
              aria-label="Custom window tokens"
            />
          </label>
        )}
        {!scope.sessionId && (
          <label className="selectfield">
            <span className="small muted">Message history from</span>
            <select value={sessionId} onChange={(e) => setPickedSession(e.target.value)} aria-label="History session">
              {(sessions.data?.rows ?? []).map((s) => (
                <option key={s.id} value={s.id}>
                  {s.id}
                  {s.summary ? ` — ${s.summary.slice(0, 50)}` : ''}
                </option>
              ))}
            </select>
          </label>
        )}
        <span className="small muted">Tokens: the engine’s estimator ({config.tokenEstimator === 'neo' ? '(UTF-8 bytes + 3) / 4' : 'ceil(chars / 4)'}).</span>
      </div>
      <div className="cw-total" data-testid="cw-total">
        <div className="cw-bar" role="img" aria-label={`${plan.used} of ${plan.window} tokens used`}>
          {plan.blocks.map((b) => (
            <span
              key={b.key}
              style={{ width: `${Math.min(100, (100 * b.tokens) / plan.window)}%`, background: BLOCK_COLOR[b.key] }}
              title={`${b.title}: ${b.tokens}`}
            />
          ))}
        </div>
        <span className={`small ${plan.free < 0 ? 'cw-over' : 'muted'}`}>
          <strong>{plan.used.toLocaleString('en-US')}</strong> of {plan.window.toLocaleString('en-US')} tokens ·{' '}
          {plan.free >= 0
            ? `${plan.free.toLocaleString('en-US')} free`
            : `over the window by ${(-plan.free).toLocaleString('en-US')}: the blocks before the history alone do not fit`}
        </span>
      </div>
      <label className="cw-system">
        <span className="small muted">[1] System prompt (paste the agent’s)</span>
        <textarea value={systemPrompt} onChange={(e) => setSystemPrompt(e.target.value)} rows={3} aria-label="System prompt" placeholder="You are …" />
      </label>
      <ol className="cw-blocks">
        {plan.blocks.map((b, n) => (
          <li key={b.key} className="cw-block" data-block={b.key} aria-label={`Block ${n + 1}: ${b.title}`}>
            <div className="sec-head">
              <h4>
                [{n + 1}] {b.title}
              </h4>
              <span className="badge" data-testid="block-tokens" data-tokens={b.tokens}>
                {b.tokens.toLocaleString('en-US')} tokens
              </span>
              <span className="cw-pct small muted">{((100 * b.tokens) / plan.window).toFixed(1)}% of the window</span>
            </div>
            <div className="cw-bar thin">
              <span style={{ width: `${Math.min(100, (100 * b.tokens) / plan.window)}%`, background: BLOCK_COLOR[b.key] }} />
            </div>
            {b.note && <p className="small muted">{b.note}</p>}
            {b.key !== 'system' && b.text !== '' && (
              // a scrolling block: focusable (tabIndex) so a keyboard can scroll it, and named for that tab stop
              <pre className="cw-text" data-testid="block-text" tabIndex={0} aria-label={`${b.title}: text`}>
                {b.text}
              </pre>
            )}
            {b.cut.length > 0 && (
              <div className="cw-cut" data-testid="block-cut">
                <div className="small">
                  Cut by the budget ({b.cut.reduce((s, c) => s + c.tokens, 0).toLocaleString('en-US')} tokens
                  {b.key === 'knowledge' ? ': memories the recall’s token budget dropped' : `: ${b.cut.length} older turn${b.cut.length === 1 ? '' : 's'}`})
                </div>
                <pre className="cw-text" tabIndex={0} aria-label={`${b.title}: cut by the budget`}>
                  {b.cut.map((c) => c.text).join(b.key === 'history' ? '\n' : '')}
                </pre>
              </div>
            )}
          </li>
        ))}
      </ol>
    </section>
  )
}
