import { call } from '../../lib/api'
import { useAsync } from '../../lib/useAsync'
import { fmtDate, fmtNum } from '../../lib/format'
import { useApp } from '../../app/context'
import { groupDuplicates } from './similarGroups'
import './browse.css'
import { CreatedAt } from '../../components/CreatedAt'

/** One memory: content, fields, metadata JSON, vectors, "more like this", and where it was recalled. */
export function MemoryDetailPane({ id, onOpen }: { id: string | null; onOpen: (id: string) => void }) {
  const { navigate } = useApp()
  const detail = useAsync(() => call('memories.get', { id: id! }), [id], { enabled: !!id })
  const similar = useAsync(() => call('memories.similar', { id: id!, k: 24 }), [id], { enabled: !!id })
  if (!id)
    return (
      <aside className="detail detail-empty" aria-label="Memory detail">
        <p className="muted">Select a memory to see its content, metadata, vector and where it was recalled. Arrow keys move through the table; Enter opens.</p>
      </aside>
    )
  if (detail.error)
    return (
      <aside className="detail" aria-label="Memory detail">
        {(detail.error as { code?: string }).code === 'NOT_FOUND' ? (
          // A link from another DB (or an old one): say so rather than show a raw error.
          <div className="notice" role="status">
            Memory <span className="mono">{id}</span> is not in this DB.
          </div>
        ) : (
          <div className="error">{detail.error.message}</div>
        )}
      </aside>
    )
  const d = detail.data
  if (!d || d.memory.id !== id)
    return (
      <aside className="detail" aria-label="Memory detail">
        <p className="muted">Loading…</p>
      </aside>
    )
  const m = d.memory
  let metadataText = d.rawMetadata ?? ''
  let metadataOk = true
  if (d.rawMetadata) {
    try {
      metadataText = JSON.stringify(JSON.parse(d.rawMetadata), null, 2)
    } catch {
      metadataOk = false
    }
  }
  return (
    <aside className="detail" aria-label="Memory detail">
      <div className="row" style={{ justifyContent: 'space-between' }}>
        <strong className="mono">{m.id}</strong>
        <span className="row" style={{ gap: 4 }}>
          <span className="badge">{m.kind ?? 'no kind'}</span>
          <span className="badge">{m.tier ?? 'no tier'}</span>
        </span>
      </div>
      <h3>Content</h3>
      <div className="content-block" data-testid="memory-content">
        {m.content}
      </div>
      {m.summary && (
        <>
          <h3>Summary</h3>
          <div className="content-block">{m.summary}</div>
        </>
      )}
      <h3>Fields</h3>
      <table className="kv">
        <tbody>
          <tr>
            <td>agent / user</td>
            <td>
              {m.agentId ?? '—'} / {m.userId ?? '—'}
            </td>
          </tr>
          <tr>
            <td>session · turn</td>
            <td>
              {m.sessionId ?? <em>cross-session user fact</em>} · {m.turn ?? '—'}
            </td>
          </tr>
          <tr>
            <td>role</td>
            <td>{m.role ?? '—'}</td>
          </tr>
          <tr>
            <td>tenant</td>
            <td>{m.tenantId ?? '—'}</td>
          </tr>
          <tr>
            <td>created</td>
            <td>
              <CreatedAt ms={m.createdAt} />
            </td>
          </tr>
          <tr>
            <td>last used · uses</td>
            <td>
              {fmtDate(m.lastUsedAt)} · {m.useCount ?? '—'}
            </td>
          </tr>
          <tr>
            <td>salience</td>
            <td>{fmtNum(m.salience, 3)}</td>
          </tr>
          <tr>
            <td>source</td>
            <td>{m.source ?? '—'}</td>
          </tr>
        </tbody>
      </table>
      {d.session?.summary && (
        <>
          <h3>Session summary</h3>
          <div className="small">{d.session.summary}</div>
        </>
      )}
      <h3>Metadata</h3>
      {d.rawMetadata === null ? (
        <span className="muted">none</span>
      ) : metadataOk ? (
        <pre className="json">{metadataText}</pre>
      ) : (
        <>
          <div className="badge warn">malformed JSON (shown raw; skipped when decoding)</div>
          <pre className="json">{metadataText}</pre>
        </>
      )}
      <h3>Vectors</h3>
      {d.vectors.length === 0 ? (
        <span className="muted">No stored vector: dense recall cannot find this memory.</span>
      ) : (
        <table className="kv">
          <tbody>
            {d.vectors.map((v) => (
              <tr key={v.model}>
                <td className="mono">{v.model}</td>
                <td>
                  {v.problem ? (
                    <span className="badge warn">{v.problem}: skipped</span>
                  ) : (
                    <>
                      dim {v.dim} · ‖v‖ {fmtNum(v.norm, 3)}
                      <div className="mono small muted">[{v.preview.map((x) => x.toFixed(3)).join(', ')}, …]</div>
                    </>
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <h3>More like this {similar.data?.model && <span className="muted small">({similar.data.model}, stored vectors)</span>}</h3>
      {similar.error && <span className="muted">{similar.error.message}</span>}
      {similar.data && similar.data.results.length === 0 && <span className="muted">No neighbours (no usable vector).</span>}
      {/* Exact duplicates are one entry (×n) listing every id: the neighbours after them stay visible. */}
      <ol className="similar small" aria-label="More like this">
        {groupDuplicates(similar.data?.results ?? [])
          .slice(0, 8)
          .map((g) => (
            <li key={g.ids[0]} data-count={g.ids.length}>
              <div className="similar-head">
                <span className="mono" title="cosine similarity of the stored vectors">
                  {g.best === g.worst ? fmtNum(g.best, 3) : `${fmtNum(g.worst, 3)}–${fmtNum(g.best, 3)}`}
                </span>
                {g.ids.length > 1 && (
                  <span className="badge warn" title={`${g.ids.length} memories with exactly this text`}>
                    ×{g.ids.length}
                  </span>
                )}
                <span className="similar-ids">
                  {g.ids.map((mid) => (
                    <a key={mid} href="#" className="mono" onClick={(e) => (e.preventDefault(), onOpen(mid))} title={`Open ${mid}`}>
                      {mid}
                    </a>
                  ))}
                </span>
              </div>
              <div className="similar-text">{g.content.slice(0, 160)}</div>
            </li>
          ))}
      </ol>
      <h3>
        Recalled in {d.appearances.length} event{d.appearances.length === 1 ? '' : 's'}
      </h3>
      {d.appearances.length === 0 ? (
        <span className="muted">No logged recall injected this memory.</span>
      ) : (
        <ul className="small" style={{ paddingLeft: 18, margin: 0 }}>
          {d.appearances.slice(0, 20).map((a) => (
            <li key={a.eventId}>
              <a href="#" onClick={(e) => (e.preventDefault(), navigate('trace', { eventId: a.eventId, memoryId: m.id }))}>
                {fmtDate(a.at)}
              </a>{' '}
              rank {a.rank} · score {fmtNum(a.score, 3)} {a.query && <span className="muted">“{a.query.slice(0, 60)}”</span>}
            </li>
          ))}
        </ul>
      )}
    </aside>
  )
}
