/** The `<option>`s of a preset picker (presets and their indented variants). */
export function PresetOptionList({ options, trim = false }: { options: readonly { value: string; label: string }[]; trim?: boolean }) {
  return options.map((o) => (
    <option key={o.value} value={o.value}>
      {trim ? o.label.trim() : o.label}
    </option>
  ))
}
