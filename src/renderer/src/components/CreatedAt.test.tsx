import { render, screen } from '@testing-library/react'
import { describe, expect, it } from 'vitest'
import { fmtCreated } from '../lib/format'
import { CreatedAt } from './CreatedAt'

describe('CreatedAt', () => {
  it('a row without a created time (decoded as 0) shows "no time" with a tooltip, never 1970', () => {
    const { container } = render(<CreatedAt ms={0} />)
    expect(screen.getByTestId('no-time')).toHaveTextContent('no time')
    expect(screen.getByTestId('no-time').getAttribute('title')).toMatch(/no created time/)
    expect(container.textContent).not.toMatch(/1970/)
    expect(fmtCreated(0)).toBe('no time')
    expect(fmtCreated(null)).toBe('no time')
  })
  it('a real time shows its UTC date', () => {
    const ms = Date.UTC(2026, 5, 1, 12, 30)
    const { container } = render(<CreatedAt ms={ms} />)
    expect(container.textContent).toBe('2026-06-01 12:30')
    expect(fmtCreated(ms)).toBe('2026-06-01 12:30')
  })
})
