/** Cutting a memory out of a logged context block (the counterfactual's leave-one-out on a logged block). */
import { describe, expect, it } from 'vitest'
import { cutFromBlock, systemPrompt } from './counterfactual'

describe('cutFromBlock', () => {
  const block = 'Recalled memory:\n[semantic] Deploys are gated on staging.\n[episodic] Rollback: redeploy the last green tag.\n'
  it('removes the whole line that holds the memory text', () => {
    expect(cutFromBlock(block, 'Deploys are gated on staging.')).toBe('Recalled memory:\n[episodic] Rollback: redeploy the last green tag.\n')
    expect(cutFromBlock(block, ' Rollback: redeploy the last green tag. ')).toBe('Recalled memory:\n[semantic] Deploys are gated on staging.\n')
  })
  it('is null when the text is not in the block (edited since) or empty', () => {
    expect(cutFromBlock(block, 'Deploys are gated on canary.')).toBeNull()
    expect(cutFromBlock(block, '  ')).toBeNull()
  })
  it('the system message: instructions, a blank line, the block (or a note that nothing was recalled)', () => {
    expect(systemPrompt('X').endsWith('\n\nX')).toBe(true)
    expect(systemPrompt('').endsWith('\n\n(nothing was recalled)')).toBe(true)
  })
})
