/**
 * "Why (not) this memory?": its status in one sentence, scope, arm ranks (even
 * beyond the pool), the score breakdown, the gate, and every knob's smallest
 * single change with what it pushes out — the overall smallest starred, each
 * verified by re-running the recall in main.
 */
import { useState } from 'react'
import type { KnobName, WhyNot } from '../../../../shared/trace'
import type { RecallConfig } from '../../../../shared/types'
import { fmtCreated, fmtDate, fmtNum } from '../../lib/format'
import { FEATURE_COLOR, FEATURE_KEYS, KNOB_LABEL, WHY_LABEL, knobValue, oneLine, setFlag } from './traceFormat'

export interface WhyCandidate {
  id: string
  label: string
}

export function WhyPicker({
  value,
  candidates,
  onExplain,
  busy,
}: {
  value: string | null
  candidates: WhyCandidate[]
  onExplain: (id: string) => void
  busy?: boolean
}) {
  const [text, setText] = useState(value ?? '')
  const [last, setLast] = useState(value)
  if (value !== last) {
    // A pick from elsewhere (diff row, injected table) replaces what was typed.
    setLast(value)
    setText(value ?? '')
  }
  return (
    <div className="tr-section">
      <form
        className="tr-pick"
        onSubmit={(e) => {
          e.preventDefault()
          if (text.trim()) onExplain(text.trim())
        }}
      >
        <input
          className="input"
          aria-label="Memory id"
          placeholder="memory id, e.g. m-000qe"
          value={text}
          onChange={(e) => setText(e.target.value)}
          list="tr-why-candidates"
        />
        <button className="btn primary" type="submit" disabled={!text.trim() || busy}>
          Explain
        </button>
      </form>
      {candidates.length > 0 && (
        <select
          className="input"
          aria-label="Pick a candidate"
          value=""
          onChange={(e) => {
            if (e.target.value) {
              setText(e.target.value)
              onExplain(e.target.value)
            }
          }}
        >
          <option value="">…or pick one of this recall’s candidates ({candidates.length})</option>
          {candidates.map((c) => (
            <option key={c.id} value={c.id}>
              {c.label}
            </option>
          ))}
        </select>
      )}
    </div>
  )
}

/** A config with one knob set (the why-not change), as the engine would run it. */
function configWithKnob(c: RecallConfig, knob: KnobName, v: number): RecallConfig {
  if (knob.startsWith('weights.')) return { ...c, weights: { ...c.weights, [knob.slice(8)]: v } }
  if (knob === 'recency.halfLifeHours') return { ...c, recency: { ...c.recency, halfLifeHours: v } }
  return { ...c, [knob]: v }
}

/** Navigation params that open Recall with the why-not's best change applied and the memory highlighted. */
function tryChangeParams(why: WhyNot, preset: string | null): Record<string, string> | null {
  if (!why.best) return null
  const b = why.best
  return {
    // the event's own preset, so Recall opens on it (the config is the event's whole config with the knob moved)
    ...(preset ? { preset } : {}),
    query: why.query,
    now: String(why.now),
    config: JSON.stringify(configWithKnob(why.config, b.knob, b.to)),
    highlight: why.memoryId,
    change: `${KNOB_LABEL[b.knob]} ${knobValue(b.from)} → ${knobValue(b.to)}`,
  }
}

/** Navigation params that open Recall with the why-not's verified pair of changes applied. */
function tryPairParams(why: WhyNot): Record<string, string> | null {
  if (!why.pair) return null
  const [a, b] = why.pair.changes
  return {
    query: why.query,
    now: String(why.now),
    config: JSON.stringify(configWithKnob(configWithKnob(why.config, a.knob, a.to), b.knob, b.to)),
    highlight: why.memoryId,
    change: why.pair.changes.map((ch) => `${KNOB_LABEL[ch.knob]} ${knobValue(ch.from)} → ${knobValue(ch.to)}`).join(' and '),
  }
}

export function WhyResult({
  why,
  onOpenMemory,
  onTryChange,
  preset = null,
}: {
  why: WhyNot
  onOpenMemory?: (id: string) => void
  onTryChange?: (params: Record<string, string>) => void
  /** the preset the event (or the ad-hoc recall) ran with: "Try this change" opens Recall on it */
  preset?: string | null
}) {
  const m = why.memory
  const s = why.scored
  const c = why.candidate
  const total = s ? FEATURE_KEYS.reduce((a, k) => a + Math.max(0, s.contributions[k]), 0) : 0
  return (
    <div className="tr-section" aria-label="Why-not result">
      {/* The verdict first: one line, the gate and the fix, before any detail. */}
      {why.verdict && (
        <p className={`tr-verdict${why.status === 'injected' ? ' ok' : ''}`} role="status" data-testid="why-verdict">
          {why.verdict}
        </p>
      )}
      <div className="tr-status">
        <span className={`tr-ws tr-ws-${why.status}`} data-testid="why-status">
          {WHY_LABEL[why.status]}
        </span>
        <span className="mono small">{why.unitId}</span>
        {onOpenMemory && why.status !== 'not-found' && why.config.unit === 'memory' && (
          <button className="tr-link small" onClick={() => onOpenMemory(why.memoryId)}>
            open memory
          </button>
        )}
      </div>
      <div className="tr-summary" data-testid="why-summary">
        {why.summary}
      </div>

      {m && (
        <div className="tr-section" aria-label="The memory">
          <div className="content-block small" data-testid="why-memory-text">
            {m.content}
          </div>
          <div className="muted small" data-testid="why-memory-meta">
            {[
              m.kind && `kind ${m.kind}`,
              m.role && `role ${m.role}`,
              m.tier && `tier ${m.tier}`,
              m.agentId && `agent ${m.agentId}`,
              m.userId && `user ${m.userId}`,
              m.sessionId && `session ${m.sessionId}`,
              `created ${fmtCreated(m.createdAt)}`,
              `last used ${m.lastUsedAt === null ? 'never' : fmtDate(m.lastUsedAt)}`,
              m.salience !== null && `salience ${fmtNum(m.salience, 2)}`,
            ]
              .filter(Boolean)
              .join(' · ')}
          </div>
        </div>
      )}

      {why.best && (
        <div className="tr-best" data-testid="why-best">
          <span className="small muted">Smallest single change{why.best.verified?.engine ? ' — verified by re-running the recall' : ''}</span>
          <span className="big">
            {KNOB_LABEL[why.best.knob]} {knobValue(why.best.from)} → {knobValue(why.best.to)}
          </span>
          <span className="small">
            injects it at rank {why.best.rank};{' '}
            {why.best.pushedOut.length ? (
              <>
                pushes out <b className="mono">{why.best.pushedOut.join(', ')}</b>
              </>
            ) : (
              'pushes nothing out'
            )}
            {why.best.pulledIn.length > 0 && (
              <>
                {' '}
                · also brings in <span className="mono">{why.best.pulledIn.join(', ')}</span>
              </>
            )}
          </span>
          <span className="small">
            <code>{setFlag(why.best.knob, why.best.to)}</code>
          </span>
          {onTryChange && why.config.unit === 'memory' && (
            <span>
              <button className="btn small primary" onClick={() => onTryChange(tryChangeParams(why, preset)!)}>
                Try this change
              </button>
            </span>
          )}
        </div>
      )}

      {!why.best && why.pair && (
        <div className="tr-best" data-testid="why-pair">
          <span className="small muted">
            No single knob change injects it. Two changes together
            {why.pair.verified?.engine ? ' — verified by re-running the recall' : ' — not confirmed by the re-run'}
          </span>
          <span className="big">{why.pair.changes.map((ch) => `${KNOB_LABEL[ch.knob]} ${knobValue(ch.from)} → ${knobValue(ch.to)}`).join('  +  ')}</span>
          <span className="small">
            injects it at rank {why.pair.verified?.rank ?? why.pair.rank};{' '}
            {(why.pair.verified?.pushedOut ?? why.pair.changes[0].pushedOut).length ? (
              <>
                pushes out <b className="mono">{(why.pair.verified?.pushedOut ?? why.pair.changes[0].pushedOut).join(', ')}</b>
              </>
            ) : (
              'pushes nothing out'
            )}
          </span>
          <span className="small">
            <code>{why.pair.changes.map((ch) => setFlag(ch.knob, ch.to)).join(' ')}</code>
          </span>
          {onTryChange && why.config.unit === 'memory' && why.pair.verified?.engine && (
            <span>
              <button className="btn small primary" onClick={() => onTryChange(tryPairParams(why)!)}>
                Try these changes
              </button>
            </span>
          )}
        </div>
      )}

      {!why.scope.inScope && why.scope.failures.length > 0 && (
        <table className="tr-table" aria-label="Scope failures">
          <thead>
            <tr>
              <th>filter</th>
              <th>it has</th>
              <th>fix</th>
            </tr>
          </thead>
          <tbody>
            {why.scope.failures.map((f, i) => (
              <tr key={i}>
                <td className="id">{f.field}</td>
                <td>
                  {f.value} <span className="muted">(wants {f.expected})</span>
                </td>
                <td>{f.fix}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}

      {(c || s || why.gate) && (
        <dl className="tr-kv">
          {c && (
            <>
              <dt>dense arm</dt>
              <dd>
                rank {c.denseRank ?? '—'} · cosine {fmtNum(c.similarity, 3)}
              </dd>
              <dt>lexical arm</dt>
              <dd>
                rank {c.lexicalRank ?? '—'} · bm25 {fmtNum(c.bm25, 2)}
              </dd>
              <dt>candidate pool</dt>
              <dd>
                {why.config.candidatePool} {c.inPool ? '(in the pool)' : `— needs ≥ ${c.poolNeeded ?? '∞'}`}
              </dd>
            </>
          )}
          {s && (
            <>
              <dt>score</dt>
              <dd>
                <b>{fmtNum(s.score, 4)}</b> (#{s.scoreRank} by score){s.rank ? ` · injected #${s.rank}` : ''} · {s.tokens} tokens
              </dd>
            </>
          )}
          {why.gate && (
            <>
              <dt>gate</dt>
              <dd data-testid="why-gate">
                <b>{why.gate.name}</b> — {why.gate.detail}
              </dd>
            </>
          )}
        </dl>
      )}

      {s && (
        <div className="tr-section">
          <div className="tr-bar" title="weighted contributions" aria-label="Contributions">
            {FEATURE_KEYS.map((k) =>
              total > 0 && s.contributions[k] > 0 ? (
                <span key={k} style={{ width: `${(100 * s.contributions[k]) / total}%`, background: FEATURE_COLOR[k] }} />
              ) : null,
            )}
          </div>
          <table className="tr-table" aria-label="Features">
            <colgroup>
              <col />
              <col style={{ width: 64 }} />
              <col style={{ width: 64 }} />
              <col style={{ width: 84 }} />
            </colgroup>
            <thead>
              <tr>
                <th>feature</th>
                <th className="num">value</th>
                <th className="num">× weight</th>
                <th className="num">= contrib.</th>
              </tr>
            </thead>
            <tbody>
              {FEATURE_KEYS.map((k) => (
                <tr key={k}>
                  <td>
                    <span className="tr-legend">
                      <span>
                        <i style={{ background: FEATURE_COLOR[k] }} />
                        {k}
                      </span>
                    </span>
                  </td>
                  <td className="num">{fmtNum(s.features[k], 3)}</td>
                  <td className="num">{fmtNum(why.config.weights[k], 2)}</td>
                  <td className="num">{fmtNum(s.contributions[k], 3)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}

      {why.knobs.length > 0 && (
        <table className="tr-table tr-knobs" aria-label="Single changes">
          <colgroup>
            <col style={{ width: 148 }} />
            <col style={{ width: 98 }} />
            <col style={{ width: 44 }} />
            <col />
          </colgroup>
          <thead>
            <tr>
              <th>knob (alone)</th>
              <th className="num">now → needed</th>
              <th className="num">Δ</th>
              <th>pushes out</th>
            </tr>
          </thead>
          <tbody>
            {why.knobs.map((k) => {
              const isBest = !!why.best && k.knob === why.best.knob && k.change?.to === why.best.to
              return (
                <tr key={k.knob} className={k.change ? undefined : 'tr-infeasible'} data-knob={k.knob}>
                  <td className={isBest ? 'tr-bestcell' : undefined}>
                    {isBest ? '★ ' : ''}
                    {KNOB_LABEL[k.knob]}
                  </td>
                  <td className="num">
                    {knobValue(k.current)}
                    {k.change ? ` → ${knobValue(k.change.to)}` : ''}
                  </td>
                  <td className="num">{k.change ? fmtNum(k.change.normalized, 3) : ''}</td>
                  <td className="small">
                    {k.change ? (
                      <>
                        {k.change.pushedOut.length ? <span className="mono">{k.change.pushedOut.join(', ')}</span> : <span className="muted">nothing</span>}
                        {k.change.verified && !k.change.verified.engine && <span className="badge danger"> engine disagrees</span>}
                      </>
                    ) : (
                      <span title={k.reason ?? ''}>{oneLine(k.reason ?? 'no change found', 70)}</span>
                    )}
                  </td>
                </tr>
              )
            })}
          </tbody>
        </table>
      )}
      {why.knobs.length > 0 && (
        <p className="muted small" style={{ margin: 0 }}>
          Each knob is moved alone, the others stay (weights are free, not renormalised). Δ is the change on the knob’s range (weights, floor: absolute; topK,
          budget, pool, half-life: log ratio), so knobs compare.
        </p>
      )}

      {why.notes.length > 0 && (
        <ul className="tr-notes">
          {why.notes.map((n, i) => (
            <li key={i}>{n}</li>
          ))}
        </ul>
      )}
      <div className="muted small">
        {why.eventId ? `event ${why.eventId}` : 'ad-hoc query'} · now {fmtDate(why.now)} · {why.mode} · {fmtNum(why.timings.totalMs, 0)} ms (
        {why.timings.evaluations} re-ranks)
      </div>
    </div>
  )
}
