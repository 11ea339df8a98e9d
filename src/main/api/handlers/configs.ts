/**
 * Handlers for named recall configs (`configs.*`): save / list / get / delete in the
 * workspace, and the field-by-field diff of two of them (or of one and the config on
 * screen). Forwarded to the store host like every store channel (host/dispatch.ts).
 * The clock is read here, at the boundary.
 */
import { diffConfigs, type ConfigDiff } from '../../../shared/savedConfigs'
import { buildConfig } from '../../recall/request'
import type { App } from '../app'
import type { Handlers } from '../register'

type ConfigChannels = 'configs.save' | 'configs.list' | 'configs.get' | 'configs.delete' | 'configs.diff'

export function configHandlers(app: App): Pick<Handlers, ConfigChannels> {
  const ws = () => app.requireStore().workspace
  return {
    'configs.save': (i) => {
      // Stored whole: a later change to a preset's defaults does not change what was saved.
      const b = buildConfig({ preset: i.preset, config: i.config })
      return ws().saveConfig({ name: i.name, preset: b.preset, config: b.config, note: i.note, replace: i.replace }, Date.now())
    },
    'configs.list': (i) => ws().listConfigs(i.limit),
    'configs.get': (i) => ws().getConfig(i.name),
    'configs.delete': (i) => ({ deleted: ws().deleteConfigs(i.names) }),
    'configs.diff': (i): ConfigDiff => {
      const a = ws().getConfig(i.a)
      if ('name' in i.b) {
        const b = ws().getConfig(i.b.name)
        return { a: a.name, b: b.name, changes: diffConfigs(a.config, b.config) }
      }
      const b = buildConfig({ preset: i.b.preset, config: i.b.config })
      return { a: a.name, b: 'current', changes: diffConfigs(a.config, b.config) }
    },
  }
}
