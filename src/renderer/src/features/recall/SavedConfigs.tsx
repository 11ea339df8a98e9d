/**
 * Named configs on the Recall screen: save the config on screen under a name, then
 * load, diff (against the config on screen), download as JSON, delete, or pin one as
 * the baseline the rank markers compare with. Stored in the workspace (configs.*).
 */
import { memo, useState } from 'react'
import type { RecallConfig } from '../../../../shared/types'
import type { ConfigDiff, SavedConfig } from '../../../../shared/savedConfigs'
import { call } from '../../lib/api'
import { useAsync } from '../../lib/useAsync'
import { downloadParts } from '../../lib/exportTable'
import type { Baseline } from './baseline'

interface SavedConfigsProps {
  preset: string
  /** the config on screen when a button is pressed (a getter: the list is memoised, and a slider step leaves it alone) */
  getConfig: () => RecallConfig
  baseline: Baseline | null
  onPin: (b: Baseline | null) => void
  onLoad: (saved: SavedConfig) => void
}

const show = (v: unknown) => (v === undefined ? 'unset' : JSON.stringify(v))

export const SavedConfigs = memo(function SavedConfigs({ preset, getConfig, baseline, onPin, onLoad }: SavedConfigsProps) {
  const [tick, setTick] = useState(0)
  const list = useAsync(() => call('configs.list', {}), [tick])
  const [name, setName] = useState('')
  const [msg, setMsg] = useState<{ text: string; conflict?: boolean } | null>(null)
  const [diff, setDiff] = useState<ConfigDiff | null>(null)

  const save = async (replace: boolean) => {
    try {
      const s = await call('configs.save', { name, preset, config: getConfig(), replace })
      setMsg({ text: `Saved "${s.name}".` })
      setName('')
      setTick((t) => t + 1)
    } catch (e) {
      const err = e as Error & { code?: string }
      setMsg({ text: err.message, conflict: err.code === 'CONFLICT' })
    }
  }
  const act = (f: () => Promise<void>) => () => void f().catch((e: Error) => setMsg({ text: e.message }))

  return (
    <section aria-label="Saved configs" className="saved-configs">
      <div className="sec-head">
        <h4>Saved configs</h4>
        {baseline ? (
          <button className="btn small" onClick={() => onPin(null)} title="Markers compare with the previous change again">
            Unpin {baseline.label}
          </button>
        ) : (
          <button
            className="btn small"
            onClick={() => onPin({ label: 'the config pinned from the screen', config: getConfig() })}
            title="The ▲/▼/NEW markers compare with this config until you unpin it"
          >
            Pin baseline
          </button>
        )}
      </div>
      {baseline && (
        <p className="small" role="status" data-testid="baseline-status">
          Markers compare with the pinned baseline: <strong>{baseline.label}</strong>.
        </p>
      )}
      <form
        className="row"
        onSubmit={(e) => {
          e.preventDefault()
          void save(false)
        }}
      >
        <input
          aria-label="Config name"
          className="input"
          placeholder="name this config"
          maxLength={120}
          value={name}
          onChange={(e) => setName(e.target.value)}
        />
        <button className="btn small" type="submit" disabled={!name.trim()}>
          Save
        </button>
      </form>
      {msg && (
        <p className="small" role="status">
          {msg.text}{' '}
          {msg.conflict && (
            <button className="btn small" onClick={() => void save(true)}>
              Replace it
            </button>
          )}
        </p>
      )}
      {list.error && <p className="error small">{list.error.message}</p>}
      {list.data && list.data.configs.length === 0 && <p className="small muted">No saved configs in this workspace yet.</p>}
      <ul className="saved-list">
        {list.data?.configs.map((c) => (
          <li key={c.name} data-name={c.name}>
            <div className="saved-name">
              <strong>{c.name}</strong> <span className="small muted">{c.preset}</span>
            </div>
            <div className="row">
              <button className="btn small" onClick={() => onLoad(c)}>
                Load
              </button>
              <button className="btn small" aria-pressed={baseline?.label === c.name} onClick={() => onPin({ label: c.name, config: c.config })}>
                Pin
              </button>
              <button
                className="btn small"
                onClick={act(async () => setDiff(await call('configs.diff', { a: c.name, b: { preset, config: getConfig() } })))}
                title="What differs from this saved config to the config on screen"
              >
                Diff
              </button>
              <button
                className="btn small"
                onClick={() => downloadParts(`${c.name.replace(/[^\w.-]+/g, '_')}.json`, [JSON.stringify(c.config, null, 2)], 'application/json')}
              >
                Download
              </button>
              <button
                className="btn small"
                aria-label={`Delete ${c.name}`}
                onClick={act(async () => {
                  await call('configs.delete', { names: [c.name] })
                  if (diff?.a === c.name) setDiff(null)
                  setTick((t) => t + 1)
                })}
              >
                Delete
              </button>
            </div>
          </li>
        ))}
      </ul>
      {list.data && list.data.unreadable.length > 0 && <p className="small warn">Unreadable (delete and save again): {list.data.unreadable.join(', ')}</p>}
      {diff && (
        <div className="config-diff" aria-label="Config diff" data-testid="config-diff">
          <div className="sec-head">
            <span className="small">
              {diff.a} → on screen:{' '}
              {diff.changes.length === 0 ? 'the same config' : `${diff.changes.length} field${diff.changes.length === 1 ? '' : 's'} differ`}
            </span>
            <button className="btn small" onClick={() => setDiff(null)}>
              Close
            </button>
          </div>
          {diff.changes.length > 0 && (
            <table className="kv small">
              <tbody>
                {diff.changes.map((ch) => (
                  <tr key={ch.path}>
                    <td className="mono">{ch.path}</td>
                    <td className="mono">
                      {show(ch.a)} → {show(ch.b)}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          )}
        </div>
      )}
    </section>
  )
})
