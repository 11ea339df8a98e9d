/**
 * The preset picker's options, shared by the recall and compare views (kept out
 * of RecallView.tsx so RequestPanel can use the type without an import cycle).
 */
import type { Preset } from '../../../../shared/presets'
import type { RecallConfig } from '../../../../shared/types'
import { mergeConfig } from '../../../../shared/config'

/** One entry of the preset picker: a preset, or one of its variants. */
export interface PresetOption {
  value: string
  label: string
  config: RecallConfig
  requires: string[]
}

/** Presets and their variants as one flat list of options. */
export function presetOptions(presets: readonly Preset[]): PresetOption[] {
  const out: PresetOption[] = []
  for (const p of presets) {
    out.push({
      value: p.name,
      label: `${p.label} (${p.seed === null ? `${p.framework?.name ?? 'framework'}'s own recall` : `seed ${String(p.seed).padStart(3, '0')}`})`,
      config: p.config,
      requires: p.requires ?? [],
    })
    for (const v of p.variants ?? [])
      out.push({ value: `${p.name}:${v.name}`, label: `  ↳ ${v.label}`, config: mergeConfig(p.config, v.patch), requires: v.requires ?? p.requires ?? [] })
  }
  return out
}
