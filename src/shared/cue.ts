/**
 * Seed 003's recall cue: the agent's "state of mind", not its last utterance.
 *
 *   def build_cue(state) -> str:
 *       return (f"Goal: {state.goal}\n"
 *               f"Current step: {state.active_subtask}\n"
 *               f"Open questions: {'; '.join(state.open_loops)}")
 *
 * Reproduced byte for byte; a missing field renders as an empty string (the
 * seed's state always has all three).
 */
import type { Cue, RecallConfig } from './types'

export function buildCue(cue: Cue): string {
  return `Goal: ${cue.goal ?? ''}\nCurrent step: ${cue.currentStep ?? ''}\nOpen questions: ${(cue.openQuestions ?? []).join('; ')}`
}

/** True when a cue carries anything to embed. */
function hasCue(cue: Cue | null | undefined): cue is Cue {
  return !!cue && (!!cue.goal || !!cue.currentStep || (cue.openQuestions?.length ?? 0) > 0)
}

/**
 * The text each arm sees. Seed 003: "lexical over the raw utterance, dense over
 * the constructed cue". With only one of the two given, both arms use it.
 */
export function armTexts(query: string, cue: Cue | null | undefined, cueUse: RecallConfig['cueUse']): { dense: string; lexical: string } {
  const cueText = hasCue(cue) ? buildCue(cue) : null
  const pick = (use: 'cue' | 'utterance') => (use === 'cue' ? (cueText ?? query) : query.trim() !== '' ? query : (cueText ?? query))
  return { dense: pick(cueUse.dense), lexical: pick(cueUse.lexical) }
}
