/**
 * Which memory drove the decision: evidence attribution first when the event
 * records what the agent did next (EvidencePanel). Then which memory drove the recall: the one that mattered most, then each injected
 * memory by leave-one-out influence FIRST — what changes in the injected set
 * and the context without it (who comes in, who else leaves, the new top,
 * tokens), the rank-biased overlap — and its share of the composite SECOND
 * (shares of similar memories are near-equal and tell them apart poorly).
 */
import type { TraceDrivers } from '../../../../shared/trace'
import { fmtNum } from '../../lib/format'
import { FEATURE_COLOR, FEATURE_KEYS, oneLine } from './traceFormat'
import { rowKeys } from '../../lib/rowKeys'
import { EvidencePanel } from './EvidencePanel'

export function DriversPanel({ drivers, onPick }: { drivers: TraceDrivers; onPick?: (id: string) => void }) {
  const maxShare = Math.max(0.0001, ...drivers.rows.map((r) => r.share))
  const order = new Map(drivers.byInfluence.map((id, i) => [id, i]))
  const rows = [...drivers.rows].sort((a, b) => (order.get(a.id) ?? 0) - (order.get(b.id) ?? 0))
  return (
    <div className="tr-section" aria-label="Drivers">
      {drivers.evidence ? (
        <EvidencePanel evidence={drivers.evidence} onPick={onPick} />
      ) : drivers.evidence === null ? (
        <div className="muted small">This event records no decision: no evidence attribution (what the agent did next is not in the log).</div>
      ) : null}
      {drivers.mattersMost ? (
        <div className="tr-mattered" data-testid="mattered-most">
          Mattered most: <span className="id">{drivers.mattersMost.id}</span>
          <div className="small">{drivers.mattersMost.why}</div>
        </div>
      ) : (
        <div className="muted">Nothing was injected: no driver.</div>
      )}
      {drivers.notes.length > 0 && (
        <ul className="tr-notes">
          {drivers.notes.map((n, i) => (
            <li key={i}>{n}</li>
          ))}
        </ul>
      )}
      {drivers.rows.length > 0 && (
        <>
          <div className="tr-legend">
            {FEATURE_KEYS.map((k) => (
              <span key={k}>
                <i style={{ background: FEATURE_COLOR[k] }} />
                {k}
              </span>
            ))}
          </div>
          <table className="tr-table" aria-label="Drivers table">
            <colgroup>
              <col style={{ width: 26 }} />
              <col />
              <col style={{ width: 140 }} />
              <col style={{ width: 44 }} />
              <col style={{ width: 48 }} />
            </colgroup>
            <thead>
              <tr>
                <th title="injected rank">#</th>
                <th title="bar: each feature's contribution; length: share of the injected composite">memory</th>
                <th title="leave-one-out: what changes in the injected set and the context without it">without it</th>
                <th className="num" title="rank-biased overlap of the injected list with vs without it (1 = nothing moves)">
                  RBO
                </th>
                <th className="num">share</th>
              </tr>
            </thead>
            <tbody>
              {rows.map((r) => (
                <tr
                  key={r.id}
                  className={onPick ? 'pick' : undefined}
                  onClick={() => onPick?.(r.id)}
                  {...rowKeys(onPick && (() => onPick(r.id)))}
                  data-id={r.id}
                >
                  <td className="num">{r.rank}</td>
                  <td>
                    <div className="id" title={r.unit?.content}>
                      {r.id} <span className="muted">{r.unit ? oneLine(r.unit.content, 40) : ''}</span>
                    </div>
                    <div className="tr-bar" style={{ width: `${(100 * r.share) / maxShare}%` }} aria-label={`${r.id} contributions`}>
                      {FEATURE_KEYS.map((k) =>
                        r.contributions[k] > 0 && r.score > 0 ? (
                          <span key={k} style={{ width: `${(100 * r.contributions[k]) / r.score}%`, background: FEATURE_COLOR[k] }} />
                        ) : null,
                      )}
                    </div>
                  </td>
                  <td className="small">
                    <div className="tr-nowrap">{r.loo.replacement ? <span className="mono">+ {r.loo.replacement.id}</span> : 'nothing in'}</div>
                    {r.loo.left && r.loo.left.length > 0 && <div className="tr-nowrap mono">− {r.loo.left.join(', ')}</div>}
                    {r.loo.topChanged && <div className="muted tr-nowrap">top → {r.loo.topAfter ?? 'none'}</div>}
                    <div className="muted tr-nowrap">
                      context {r.loo.tokenDelta > 0 ? `−${r.loo.tokenDelta}` : r.loo.tokenDelta < 0 ? `+${-r.loo.tokenDelta}` : '±0'} tok
                    </div>
                  </td>
                  <td className="num">{fmtNum(r.loo.rbo, 2)}</td>
                  <td className="num">{(r.share * 100).toFixed(0)}%</td>
                </tr>
              ))}
            </tbody>
          </table>
          <p className="muted small" style={{ margin: 0 }}>
            Ordered by leave-one-out influence ({drivers.byInfluence.join(' › ')}); share of the composite is secondary. Leave-one-out re-ranks the same
            candidates as if the memory did not exist (computed on the event-time replay).
          </p>
        </>
      )}
    </div>
  )
}
