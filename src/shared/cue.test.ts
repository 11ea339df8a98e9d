import { describe, expect, it } from 'vitest'
import { armTexts, buildCue } from './cue'

describe('seed 003 cue', () => {
  it('is exactly f"Goal: {goal}\\nCurrent step: {active_subtask}\\nOpen questions: {\'; \'.join(open_loops)}"', () => {
    expect(
      buildCue({ goal: 'ship the tier migration', currentStep: 'apply it on staging', openQuestions: ['is the backfill done?', 'who approves prod?'] }),
    ).toBe('Goal: ship the tier migration\nCurrent step: apply it on staging\nOpen questions: is the backfill done?; who approves prod?')
    expect(buildCue({ goal: 'g' })).toBe('Goal: g\nCurrent step: \nOpen questions: ')
  })

  it('hybrid: dense over the cue, lexical over the raw utterance; either alone feeds both', () => {
    const cue = { goal: 'g', currentStep: 's', openQuestions: [] }
    expect(armTexts('error E42 again', cue, { dense: 'cue', lexical: 'utterance' })).toEqual({
      dense: 'Goal: g\nCurrent step: s\nOpen questions: ',
      lexical: 'error E42 again',
    })
    expect(armTexts('error E42 again', null, { dense: 'cue', lexical: 'utterance' })).toEqual({ dense: 'error E42 again', lexical: 'error E42 again' })
    expect(armTexts('', cue, { dense: 'cue', lexical: 'utterance' }).lexical).toBe('Goal: g\nCurrent step: s\nOpen questions: ')
  })
})
