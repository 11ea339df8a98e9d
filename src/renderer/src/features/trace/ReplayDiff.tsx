/**
 * A replay against its log: the verdict (identical, or counts per status), the
 * event-level notes (config, embedder, time), and one row per memory with its
 * logged and replayed rank/score and every cause, in words with the numbers.
 */
import { Fragment } from 'react'
import type { TraceReplay } from '../../../../shared/trace'
import { fmtNum } from '../../lib/format'
import { CAUSE_LABEL, STATUS_HINT, STATUS_LABEL, oneLine } from './traceFormat'
import { rowKeys } from '../../lib/rowKeys'

const STRONG = new Set([
  'deleted',
  'created-after',
  'out-of-scope',
  'last-used-changed',
  'vector-changed',
  'salience-changed',
  'recency-input-changed',
  'lexical-changed',
  'content-changed',
  'embedder-differs',
  'config-differs',
])

export function ReplayDiff({ replay, selectedId, onPick }: { replay: TraceReplay; selectedId?: string | null; onPick?: (id: string) => void }) {
  const c = replay.counts
  const parts = (Object.keys(c) as (keyof typeof c)[]).filter((k) => c[k] > 0).map((k) => `${c[k]} ${STATUS_LABEL[k]}`)
  return (
    <div className="tr-section" data-testid={`replay-${replay.mode}`}>
      <div className={`tr-verdict ${replay.identical ? 'identical' : 'differs'}`} role="status">
        <strong>{replay.identical ? 'Identical to the log' : 'Differs from the log'}</strong>
        <span className="muted small">{parts.join(' · ') || 'nothing logged, nothing recalled'}</span>
        <span className="spacer" />
        <span className="muted small">
          {replay.mode === 'logged' ? 'at the event’s own time' : `today: ${new Date(replay.now).toISOString().slice(0, 16).replace('T', ' ')}`} · vector{' '}
          {replay.vector.source} · {fmtNum(replay.tookMs, 1)} ms
        </span>
      </div>
      {replay.notes.length > 0 && (
        <ul className="tr-notes" aria-label="Replay notes">
          {replay.notes.map((n, i) => (
            <li key={i}>{n.text}</li>
          ))}
        </ul>
      )}
      {replay.rows.length > 0 && (
        <table className="tr-table" aria-label={`Replay diff (${replay.mode})`}>
          <colgroup>
            <col style={{ width: 84 }} />
            <col style={{ width: 86 }} />
            <col style={{ width: 86 }} />
            <col style={{ width: 92 }} />
            <col />
          </colgroup>
          <thead>
            <tr>
              <th>status</th>
              <th>memory</th>
              <th className="num">logged</th>
              <th className="num">replayed</th>
              <th>text (today)</th>
            </tr>
          </thead>
          <tbody>
            {replay.rows.map((r) => (
              <Fragment key={r.id}>
                <tr
                  className={`${onPick ? 'pick' : ''}${r.causes.length ? ' tr-has-causes' : ''}`}
                  aria-selected={selectedId === r.id}
                  onClick={() => onPick?.(r.id)}
                  {...rowKeys(onPick && (() => onPick(r.id)))}
                  data-status={r.status}
                  data-id={r.id}
                >
                  <td>
                    <span className={`tr-st tr-st-${r.status}`} title={STATUS_HINT[r.status]}>
                      {STATUS_LABEL[r.status]}
                    </span>
                  </td>
                  <td className="id" title={r.id}>
                    {r.id}
                  </td>
                  <td className="num">{r.logged ? `#${r.logged.rank} ${fmtNum(r.logged.score, 3)}` : '—'}</td>
                  <td className="num">
                    {r.replayed ? `#${r.replayed.rank} ${fmtNum(r.replayed.score, 3)}` : r.replayGate ? <span className="muted">{r.replayGate}</span> : '—'}
                  </td>
                  <td>
                    <div className={r.unit ? 'txt' : 'txt gone'} title={r.unit?.content}>
                      {r.unit ? oneLine(r.unit.content, 90) : 'no longer in the DB'}
                    </div>
                  </td>
                </tr>
                {r.causes.length > 0 && (
                  <tr className="tr-causes-row" aria-selected={selectedId === r.id} onClick={() => onPick?.(r.id)}>
                    <td colSpan={5}>
                      <ul className="tr-causes" aria-label={`Why ${r.id} differs`}>
                        {r.causes.map((k, i) => (
                          <li key={i}>
                            <span className={`tr-cause-tag${STRONG.has(k.code) ? ' strong' : ''}`}>{CAUSE_LABEL[k.code]}</span>
                            <span>{k.text}</span>
                          </li>
                        ))}
                      </ul>
                    </td>
                  </tr>
                )}
              </Fragment>
            ))}
          </tbody>
        </table>
      )}
    </div>
  )
}
