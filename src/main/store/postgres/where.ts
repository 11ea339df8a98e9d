/**
 * WHERE builders for the Postgres source: the scope of a recall or a browser
 * filter becomes a WHERE clause over the canonical sub-select (alias `m`), so
 * only matching rows ever cross the wire. `$n` parameters, collected in order.
 */
import type { EventFilter } from '../../../shared/contract'
import type { MemoryFilter, MemorySort } from '../source'

/** Collects positional parameters: `p(v)` returns `$n`. */
export class Params {
  readonly values: unknown[] = []
  p(v: unknown): string {
    this.values.push(v)
    return `$${this.values.length}`
  }
}

/** `%`, `_` and `\` taken literally in a LIKE pattern. */
export function likeEscape(s: string): string {
  return s.replace(/[\\%_]/g, (c) => `\\${c}`)
}

/** WHERE (without the keyword) for alias `m`; `embeddings` is the vectors sub-select (owner_type, owner_id…) for `hasEmbedding`. */
export function memoryWhere(f: MemoryFilter, ps: Params, embeddings: string | null): string {
  const parts: string[] = []
  const list = (c: string, vals: string[] | undefined, negate = false) => {
    if (!vals) return
    if (vals.length === 0) {
      if (!negate) parts.push('false')
      return
    }
    const hasNull = vals.includes('(none)')
    const real = vals.filter((v) => v !== '(none)')
    const inList = real.length ? `${c} ${negate ? '<>' : '='} ${negate ? 'ALL' : 'ANY'}(${ps.p(real)}::text[])` : null
    if (negate) {
      if (inList) parts.push(`(${c} IS NULL OR ${inList})`)
    } else if (hasNull) parts.push(inList ? `(${inList} OR ${c} IS NULL)` : `${c} IS NULL`)
    else parts.push(inList!)
  }
  if (f.agentId !== undefined) parts.push(`m.agent_id = ${ps.p(f.agentId)}`)
  if (f.userId !== undefined) parts.push(`m.user_id = ${ps.p(f.userId)}`)
  if (f.sessionId !== undefined) parts.push(`m.session_id = ${ps.p(f.sessionId)}`)
  if (f.noSession) parts.push('m.session_id IS NULL')
  if (f.tenantId !== undefined) parts.push(`m.tenant_id = ${ps.p(f.tenantId)}`)
  list('m.kind', f.kinds)
  list('m.tier', f.tiers)
  list('m.role', f.roles)
  if (f.after !== undefined) parts.push(`m.created_at >= ${ps.p(f.after)}::float8`)
  // A row without a time decodes as created at 0 (store/decode.ts): it exists at every moment, so `before` keeps it.
  if (f.before !== undefined) parts.push(`(m.created_at <= ${ps.p(f.before)}::float8 OR m.created_at IS NULL)`)
  list('m.id', f.ids)
  list('m.id', f.excludeIds, true)
  if (f.hasEmbedding !== undefined) {
    if (!embeddings) {
      if (f.hasEmbedding) parts.push('false')
    } else {
      const ex = `EXISTS (SELECT 1 FROM (${embeddings}) e WHERE e.owner_type = 'memory' AND e.owner_id = m.id)`
      parts.push(f.hasEmbedding ? ex : `NOT ${ex}`)
    }
  }
  return parts.length ? parts.join(' AND ') : 'true'
}

/** ORDER BY for memories; ties by id so paging is stable. */
export function memoryOrder(by: MemorySort, dir: 'asc' | 'desc', hasRelevance: boolean): string {
  if (by === 'relevance') return hasRelevance ? `rank ${dir === 'desc' ? 'DESC' : 'ASC'}, m.id DESC` : 'm.created_at DESC, m.id DESC'
  const d = dir === 'asc' ? 'ASC' : 'DESC'
  return `m.${by} ${d} NULLS LAST, m.id ${d}`
}

/** WHERE for recall events, alias `r` (results is JSON text: an id array or objects with `id`). */
export function eventWhere(f: EventFilter, ps: Params): string {
  const parts: string[] = []
  if (f.agentId !== undefined) parts.push(`r.agent_id = ${ps.p(f.agentId)}`)
  if (f.userId !== undefined) parts.push(`r.user_id = ${ps.p(f.userId)}`)
  if (f.sessionId !== undefined) parts.push(`r.session_id = ${ps.p(f.sessionId)}`)
  if (f.after !== undefined) parts.push(`r.at >= ${ps.p(f.after)}::float8`)
  if (f.before !== undefined) parts.push(`r.at <= ${ps.p(f.before)}::float8`)
  if (f.memoryId !== undefined) {
    const id = ps.p(f.memoryId)
    parts.push(
      `r.results LIKE ${ps.p(`%"${likeEscape(f.memoryId)}"%`)} AND EXISTS (SELECT 1 FROM jsonb_array_elements(CASE WHEN jsonb_typeof(r.results::jsonb) = 'array' THEN r.results::jsonb ELSE '[]'::jsonb END) j(v)
        WHERE (CASE jsonb_typeof(j.v) WHEN 'object' THEN j.v->>'id' ELSE j.v #>> '{}' END) = ${id})`,
    )
  }
  if (f.search) {
    const s = ps.p(`%${likeEscape(f.search)}%`)
    parts.push(`(r.query ILIKE ${s} OR r.cue ILIKE ${s})`)
  }
  return parts.length ? parts.join(' AND ') : 'true'
}
