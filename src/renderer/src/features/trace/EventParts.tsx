/**
 * The pieces of one recall event's view that show what the agent's own records
 * said (issue 20): where the event came from (origin), what came back — each
 * memory with its logged score ("—" when the log had none) and how the logged
 * result was tied to it (id / text / normalised text) — the results no memory
 * matched (listed, never dropped), and the decision: the agent's next message or
 * tool call, with its time.
 */
import type { TraceEventDetail } from '../../../../shared/trace'
import type { EventDecision, EventOrigin, MatchedBy, RecallEvent, UnmatchedResult } from '../../../../shared/types'
import { words } from '../../../../shared/evidence'
import { fmtDate, fmtNum } from '../../lib/format'
import { rowKeys } from '../../lib/rowKeys'
import { oneLine } from './traceFormat'
import { CreatedAt } from '../../components/CreatedAt'

const ORIGIN_LABEL: Record<EventOrigin['kind'], string> = {
  recall_events: 'recall_events table',
  letta: 'Letta messages',
  langgraph: 'LangGraph checkpoint',
  'openai-agents': 'OpenAI Agents session',
  openmemory: 'OpenMemory access log',
  'claude-code': 'Claude Code transcript',
  otlp: 'OTLP trace file',
  'otlp-live': 'live OTLP',
}

const MATCH_HINT: Record<MatchedBy, string> = {
  id: 'the logged id is this memory’s id',
  text: 'the logged text is exactly this memory’s text',
  normalized: 'the logged text equals this memory’s text after folding whitespace, quotes and case',
}

/** A logged score, or "—" when the log recorded none (NaN in IPC, null over JSON). */
function fmtLoggedScore(s: number | null | undefined): string {
  return typeof s === 'number' && Number.isFinite(s) ? fmtNum(s, 3) : '—'
}

/** Where the event came from: the source kind, the tool or span, the file and line, the ids inside the source. */
export function OriginLine({ origin }: { origin: EventOrigin | undefined }) {
  if (!origin) return null
  const ids = (
    [
      ['message', origin.messageId],
      ['call', origin.callId],
      ['trace', origin.traceId],
      ['span', origin.spanId],
    ] as const
  ).filter(([, v]) => v)
  return (
    <div className="tr-origin" data-testid="event-origin">
      <span className="badge">{ORIGIN_LABEL[origin.kind] ?? origin.kind}</span>
      {origin.tool && (
        <span>
          tool <b className="mono">{origin.tool}</b>
        </span>
      )}
      {origin.file && (
        <span className="mono" title={origin.file}>
          {origin.file.split(/[\\/]/).pop()}
          {origin.line ? `:${origin.line}` : ''}
        </span>
      )}
      {ids.map(([k, v]) => (
        <span key={k} className="muted">
          {k} <span className="mono">{v}</span>
        </span>
      ))}
    </div>
  )
}

/** The memories that came back, in returned order: rank, logged score, how it matched, today's text. */
export function ReturnedTable({
  detail,
  replayRank,
  whyId,
  onWhy,
  onOpenMemory,
}: {
  detail: TraceEventDetail
  replayRank: (id: string) => number | null
  whyId: string | null
  onWhy: (id: string) => void
  onOpenMemory: (id: string) => void
}) {
  const matched = new Map<string, MatchedBy | undefined>(detail.event.results.map((r) => [r.id, r.matchedBy]))
  return (
    <table className="tr-table" aria-label="Injected memories">
      <colgroup>
        <col style={{ width: 30 }} />
        <col style={{ width: 120 }} />
        <col style={{ width: 64 }} />
        <col />
        <col style={{ width: 52 }} />
      </colgroup>
      <thead>
        <tr>
          <th>#</th>
          <th>memory</th>
          <th className="num">logged</th>
          <th>text (today)</th>
          <th />
        </tr>
      </thead>
      <tbody>
        {detail.injected.map((r) => {
          const rr = replayRank(r.id)
          const how = matched.get(r.id)
          return (
            <tr key={r.id} className="pick" aria-selected={whyId === r.id} onClick={() => onWhy(r.id)} {...rowKeys(() => onWhy(r.id))} data-id={r.id}>
              <td className="num">{r.rank}</td>
              <td className="id" title={r.id}>
                {r.id}
                {how && (
                  <span className={`tr-match tr-match-${how}`} title={`matched by ${how}: ${MATCH_HINT[how]}`} data-testid="matched-by">
                    {how === 'normalized' ? 'norm' : how}
                  </span>
                )}
              </td>
              <td className="num">{fmtLoggedScore(r.score)}</td>
              <td>
                <div className={r.unit ? 'txt' : 'txt gone'} title={r.unit?.content}>
                  {r.unit ? oneLine(r.unit.content, 120) : 'no longer in the DB'}
                </div>
                <div className="muted small">
                  {r.unit?.kind ?? ''}{' '}
                  {r.unit ? (
                    <>
                      · created <CreatedAt ms={r.unit.createdAt} />
                    </>
                  ) : (
                    ''
                  )}{' '}
                  {rr !== null && rr !== r.rank ? `· replay #${rr}` : ''}
                </div>
              </td>
              <td>
                {detail.config.unit === 'memory' && r.unit && (
                  <button
                    className="tr-link small"
                    title="open this memory in the browser"
                    aria-label={`open memory ${r.id}`}
                    onClick={(x) => {
                      x.stopPropagation()
                      onOpenMemory(r.id)
                    }}
                  >
                    open
                  </button>
                )}
              </td>
            </tr>
          )
        })}
      </tbody>
    </table>
  )
}

/** Logged results that match no memory of the open store, with what the log said. */
export function UnmatchedTable({ unmatched }: { unmatched: UnmatchedResult[] | undefined }) {
  if (!unmatched || unmatched.length === 0) return null
  return (
    <section className="tr-section" aria-label="Unmatched results">
      <header>
        <h3>Not matched to a memory ({unmatched.length})</h3>
        <span className="muted small">the log returned them; no memory of this store has their id or text</span>
      </header>
      <table className="tr-table" aria-label="Unmatched results table">
        <colgroup>
          <col style={{ width: 30 }} />
          <col style={{ width: 160 }} />
          <col style={{ width: 64 }} />
          <col />
        </colgroup>
        <thead>
          <tr>
            <th>#</th>
            <th>logged id</th>
            <th className="num">logged</th>
            <th>logged text</th>
          </tr>
        </thead>
        <tbody>
          {unmatched.map((u) => (
            <tr key={`${u.rank}-${u.loggedId ?? ''}`}>
              <td className="num">{u.rank}</td>
              <td className="id" title={u.loggedId ?? ''}>
                {u.loggedId ?? <span className="muted">(none)</span>}
              </td>
              <td className="num">{fmtLoggedScore(u.score)}</td>
              <td>{u.text ? <div className="txt">{oneLine(u.text, 160)}</div> : <span className="muted">(no text logged)</span>}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </section>
  )
}

/** Seconds (or minutes) from the recall to the decision. */
function after(at: number | null, eventAt: number): string {
  if (at === null) return ''
  const s = (at - eventAt) / 1000
  if (!Number.isFinite(s)) return ''
  return Math.abs(s) < 120 ? ` (${s >= 0 ? '+' : ''}${s.toFixed(1)} s after the recall)` : ` (${s >= 0 ? '+' : ''}${(s / 60).toFixed(1)} min)`
}

/** A tool call's arguments, pretty-printed when they are JSON. */
function prettyArgs(a: string): string {
  try {
    return JSON.stringify(JSON.parse(a), null, 2)
  } catch {
    return a
  }
}

/** What the agent did next: its message or tool call, when, and where that was read. */
export function DecisionView({ decision, event, terms }: { decision: EventDecision | null | undefined; event: RecallEvent; terms?: ReadonlySet<string> }) {
  return (
    <section className="tr-section" aria-label="Decision">
      <header>
        <h3>Decision</h3>
        {decision && (
          <span className="muted small" data-testid="decision-at">
            {decision.via} · {decision.at !== null ? `${fmtDate(decision.at)} UTC${after(decision.at, event.at)}` : 'time not recorded'}
          </span>
        )}
      </header>
      {!decision ? (
        <div className="notice small">
          This event records no decision: the log keeps what was recalled, not what the agent did next. Event sources that read an agent’s own transcript
          (Letta, LangGraph, Agents SDK, Claude Code, OTLP) take it from the next message or span; a <span className="mono">recall_events</span> table can carry
          it in an optional <span className="mono">decision</span> column.
        </div>
      ) : (
        <div className="tr-decision" data-testid="decision">
          {decision.text && <Highlighted text={decision.text} terms={terms} />}
          {decision.toolCall && (
            <div>
              <div>
                tool call <b className="mono">{decision.toolCall.name}</b>
              </div>
              <pre className="tr-block">
                <Highlighted text={prettyArgs(decision.toolCall.arguments)} terms={terms} />
              </pre>
            </div>
          )}
        </div>
      )}
    </section>
  )
}

/** A text with the words whose term is in `terms` marked (the same tokenizer the attribution used). */
export function Highlighted({ text, terms }: { text: string; terms?: ReadonlySet<string> }) {
  if (!terms || terms.size === 0) return <>{text}</>
  const out: React.ReactNode[] = []
  let at = 0
  for (const w of words(text)) {
    if (!w.term || !terms.has(w.term)) continue
    if (w.start > at) out.push(text.slice(at, w.start))
    out.push(<mark key={w.start}>{w.word}</mark>)
    at = w.start + w.word.length
  }
  if (at < text.length) out.push(text.slice(at))
  return <>{out}</>
}
