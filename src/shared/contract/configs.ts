/** The contract's named-config channels: save, list, get, delete, diff. */
import { z } from 'zod'
import { partialConfigSchema } from '../config'
import type { ConfigDiff, SavedConfig } from '../savedConfigs'
import { configName, out, presetName } from './common'

export const configsChannels = {
  // --- named configs ---------------------------------------------------------
  /**
   * Save a recall config under a name in the workspace. A partial config is merged over `preset`
   * (default fieldguide) and stored whole. A taken name answers CONFLICT unless `replace` is true.
   */
  'configs.save': {
    input: z.strictObject({
      name: configName,
      preset: presetName.optional(),
      config: partialConfigSchema.default({}),
      /** free text shown beside the name. @default '' */
      note: z.string().max(2000).default(''),
      /** replace a config of the same name (keeping its creation time). @default false */
      replace: z.boolean().default(false),
    }),
    output: out<SavedConfig>(),
  },
  /** Saved configs, most recently saved first; `unreadable` names rows that no longer validate. */
  'configs.list': {
    input: z.strictObject({ limit: z.number().int().min(1).max(10_000).default(500) }),
    output: out<{ configs: SavedConfig[]; unreadable: string[] }>(),
  },
  /** One saved config, whole (what "Download" writes). NOT_FOUND when there is none of that name. */
  'configs.get': { input: z.strictObject({ name: configName }), output: out<SavedConfig>() },
  /** Delete saved configs by name. */
  'configs.delete': { input: z.strictObject({ names: z.array(configName).min(1, 'names is required').max(1000) }), output: out<{ deleted: number }>() },
  /**
   * Field-by-field difference from saved config `a` to `b`: another saved config's name, or a config
   * (partial, merged over `preset`) such as the one on the Recall screen.
   */
  'configs.diff': {
    input: z.strictObject({
      a: configName,
      b: z.union([z.strictObject({ name: configName }), z.strictObject({ preset: presetName.optional(), config: partialConfigSchema })]),
    }),
    output: out<ConfigDiff>(),
  },
} as const
