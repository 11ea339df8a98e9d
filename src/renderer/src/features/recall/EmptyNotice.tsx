/**
 * "Nothing injected": which gate dropped every candidate, by how much, and a
 * button that applies the knob change that injects something (explainEmpty.ts).
 */
import type { PartialRecallConfig } from '../../../../shared/config'
import type { EmptyExplanation } from '../../../../shared/explainEmpty'

export function EmptyNotice({ empty, onApply }: { empty: EmptyExplanation; onApply: (patch: PartialRecallConfig) => void }) {
  return (
    <div className="notice small warn" role="status" aria-label="Why nothing was injected">
      <strong>Nothing injected.</strong> {empty.message}{' '}
      {empty.suggestion && (
        <button className="btn small" onClick={() => onApply(empty.suggestion!.patch)}>
          Apply: {empty.suggestion.label}
          {empty.suggestion.wouldInject > 0 ? ` (injects ${empty.suggestion.wouldInject})` : ''}
        </button>
      )}
    </div>
  )
}
