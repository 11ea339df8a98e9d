/**
 * Small form controls with fixed geometry (values in tabular numerals, fixed
 * widths) so nothing shifts while a slider moves.
 */
import { useCallback, useId, useLayoutEffect, useRef, useState } from 'react'
import { writeText } from '../lib/writeText'

export interface SliderProps {
  label: string
  value: number
  min: number
  max: number
  step: number
  onChange: (v: number) => void
  format?: (v: number) => string
  hint?: string
  /** a colour swatch before the label (feature colours) */
  swatch?: string
  disabled?: boolean
  /** the range input, for a writer of its value outside a render (`writeSliderValue`: the Recall screen's drag) */
  inputRef?: (el: HTMLInputElement | null) => void
}

/**
 * Writes a slider's value into its range input, its `aria-valuetext` and its `<output>`: the only writer of
 * these (the input is uncontrolled, the output rendered empty), called after every render of the slider, at once
 * when it is moved, and by a screen that shows a value without a render (the Recall screen's drag fast path,
 * docs/internals/performance.md "Round 5: a held slider without React"). A controlled range input would be put back by React to its last
 * rendered value after every input event that sets no state of its own.
 */
export function writeSliderValue(input: HTMLInputElement, value: number, format?: (v: number) => string): void {
  const v = String(value)
  if (input.value !== v) input.value = v
  const text = format ? format(value) : v
  if (!format) input.removeAttribute('aria-valuetext')
  else if (input.getAttribute('aria-valuetext') !== text) input.setAttribute('aria-valuetext', text)
  const out = input.nextElementSibling
  writeText(out, text)
}

export function Slider({ label, value, min, max, step, onChange, format, hint, swatch, disabled, inputRef }: SliderProps) {
  const id = useId()
  const input = useRef<HTMLInputElement | null>(null)
  // The value it starts at; every later one is written (writeSliderValue).
  const [initial] = useState(value)
  useLayoutEffect(() => {
    if (input.current) writeSliderValue(input.current, value, format)
  })
  const setInput = useCallback(
    (el: HTMLInputElement | null) => {
      input.current = el
      inputRef?.(el)
    },
    [inputRef],
  )
  return (
    <div className="slider" title={hint}>
      <label htmlFor={id} className="slider-label">
        {swatch && <span className="swatch" style={{ background: swatch }} />}
        {label}
      </label>
      {/* aria-valuetext: a log-scale slider's position (e.g. 583 of 1000) is not its value ("7.0 d") */}
      <input
        id={id}
        ref={setInput}
        type="range"
        min={min}
        max={max}
        step={step}
        defaultValue={initial}
        disabled={disabled}
        onChange={(e) => {
          const v = Number(e.target.value)
          writeSliderValue(e.target, v, format)
          onChange(v)
        }}
      />
      <output htmlFor={id} className="slider-value" />
    </div>
  )
}

/** A slider that can be switched off (null), e.g. floor or token budget. */
export function OptionalSlider(
  props: Omit<SliderProps, 'value' | 'onChange'> & { value: number | null; onChange: (v: number | null) => void; offValue: number },
) {
  const { value, onChange, offValue, label, ...rest } = props
  const id = useId()
  return (
    <div className="optslider">
      <input id={id} type="checkbox" aria-label={`${label} on`} checked={value !== null} onChange={(e) => onChange(e.target.checked ? offValue : null)} />
      <Slider
        {...rest}
        label={label}
        value={value ?? offValue}
        disabled={value === null}
        onChange={(v) => onChange(v)}
        format={value === null ? () => 'off' : rest.format}
      />
    </div>
  )
}

export function Select<T extends string>({
  label,
  value,
  options,
  onChange,
  hint,
}: {
  label: string
  value: T
  options: readonly (T | { value: T; label: string })[]
  onChange: (v: T) => void
  hint?: string
}) {
  const id = useId()
  return (
    <div className="selectfield" title={hint}>
      <label htmlFor={id}>{label}</label>
      <select id={id} className="input" value={value} onChange={(e) => onChange(e.target.value as T)}>
        {options.map((o) => {
          const v = typeof o === 'string' ? o : o.value
          const l = typeof o === 'string' ? o : o.label
          return (
            <option key={v} value={v}>
              {l}
            </option>
          )
        })}
      </select>
    </div>
  )
}

export function Toggle({ label, checked, onChange, hint }: { label: string; checked: boolean; onChange: (v: boolean) => void; hint?: string }) {
  return (
    <label className="toggle" title={hint}>
      <input type="checkbox" checked={checked} onChange={(e) => onChange(e.target.checked)} />
      {label}
    </label>
  )
}

export function NumberInput({
  label,
  value,
  min,
  max,
  step = 1,
  onChange,
  hint,
}: {
  label: string
  value: number
  min: number
  max: number
  step?: number
  onChange: (v: number) => void
  hint?: string
}) {
  const id = useId()
  return (
    <div className="selectfield" title={hint}>
      <label htmlFor={id}>{label}</label>
      <input
        id={id}
        className="input num"
        type="number"
        min={min}
        max={max}
        step={step}
        value={value}
        onChange={(e) => {
          const n = Number(e.target.value)
          if (e.target.value !== '' && Number.isFinite(n)) onChange(Math.min(max, Math.max(min, n)))
        }}
      />
    </div>
  )
}
