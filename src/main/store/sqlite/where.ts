/**
 * SQL builders over the canonical sub-selects of a Source. Every list query is
 * bounded (offset/limit + a capped count with a `truncated` flag).
 */
import type { EventFilter } from '../../../shared/contract'
import type { MemoryFilter, MemorySort } from '../source'
import { likeEscape } from './connection'

export interface Where {
  sql: string
  params: Record<string, unknown>
}

/** Build a WHERE clause (without the keyword) for alias `m`. Empty filter → '1'. */
export function memoryWhere(f: MemoryFilter, embeddingsSql: string | readonly string[] | null, prefix = 'f'): Where {
  const parts: string[] = []
  const params: Record<string, unknown> = {}
  let n = 0
  const p = (v: unknown) => {
    const k = `${prefix}${n++}`
    params[k] = v
    return `@${k}`
  }
  const list = (col: string, vals: string[] | undefined, negate = false) => {
    if (!vals) return
    if (vals.length === 0) {
      if (!negate) parts.push('0')
      return
    }
    const hasNull = vals.includes('(none)')
    const real = vals.filter((v) => v !== '(none)')
    const inList = real.length ? `${col} ${negate ? 'NOT ' : ''}IN (${real.map((v) => p(v)).join(', ')})` : null
    if (negate) {
      if (inList) parts.push(`(${col} IS NULL OR ${inList})`)
    } else if (hasNull) parts.push(inList ? `(${inList} OR ${col} IS NULL)` : `${col} IS NULL`)
    else parts.push(inList!)
  }
  if (f.agentId !== undefined) parts.push(`m.agent_id = ${p(f.agentId)}`)
  if (f.userId !== undefined) parts.push(`m.user_id = ${p(f.userId)}`)
  if (f.sessionId !== undefined) parts.push(`m.session_id = ${p(f.sessionId)}`)
  if (f.noSession) parts.push(`m.session_id IS NULL`)
  if (f.tenantId !== undefined) parts.push(`m.tenant_id = ${p(f.tenantId)}`)
  list('m.kind', f.kinds)
  list('m.tier', f.tiers)
  list('m.role', f.roles)
  if (f.after !== undefined) parts.push(`m.created_at >= ${p(f.after)}`)
  // A row without a time decodes as created at 0 (store/decode.ts): it exists at every moment, so `before` keeps it.
  if (f.before !== undefined) parts.push(`(m.created_at <= ${p(f.before)} OR m.created_at IS NULL)`)
  list('m.id', f.ids)
  list('m.id', f.excludeIds, true)
  if (f.hasEmbedding !== undefined) {
    const sources = (Array.isArray(embeddingsSql) ? embeddingsSql : embeddingsSql ? [embeddingsSql] : []) as string[]
    if (sources.length === 0) {
      if (f.hasEmbedding) parts.push('0')
    } else {
      // A correlated EXISTS per source: walking memories in page order, each row probes the
      // (owner_type, owner_id) index, so a page stops after `limit` rows instead of reading every vector.
      const any = sources.map((src) => `EXISTS (SELECT 1 FROM (${src}) e WHERE e.owner_type = 'memory' AND e.owner_id = m.id)`).join(' OR ')
      parts.push(f.hasEmbedding ? `(${any})` : `NOT (${any})`)
    }
  }
  return { sql: parts.length ? parts.join(' AND ') : '1', params }
}

/** ORDER BY for memories; ties broken by _rid so paging is stable. */
export function memoryOrder(by: MemorySort, dir: 'asc' | 'desc', hasRelevance: boolean): string {
  if (by === 'relevance') return hasRelevance ? `rank ${dir === 'desc' ? 'ASC' : 'DESC'}, m._rid DESC` : `m.created_at DESC, m._rid DESC`
  const d = dir === 'asc' ? 'ASC' : 'DESC'
  // NULLs last whatever the direction ("never used" after every used memory). DESC
  // already puts NULLs last, so the created_at index still serves the default sort.
  return `m.${by} ${d}${d === 'ASC' ? ' NULLS LAST' : ''}, m._rid ${d}`
}

/**
 * The one WHERE builder for recall events (events.page, the timeline, a memory's
 * appearances), alias `r`. The memory filter is a LIKE prefilter on the results'
 * JSON text confirmed by json_each, so an id that is a substring of another never matches.
 */
export function eventWhere(f: EventFilter): Where {
  const parts: string[] = []
  const params: Record<string, unknown> = {}
  if (f.agentId !== undefined) {
    parts.push('r.agent_id = @agentId')
    params.agentId = f.agentId
  }
  if (f.userId !== undefined) {
    parts.push('r.user_id = @userId')
    params.userId = f.userId
  }
  if (f.sessionId !== undefined) {
    parts.push('r.session_id = @sessionId')
    params.sessionId = f.sessionId
  }
  if (f.after !== undefined) {
    parts.push('r.at >= @after')
    params.after = f.after
  }
  if (f.before !== undefined) {
    parts.push('r.at <= @before')
    params.before = f.before
  }
  if (f.memoryId !== undefined) {
    parts.push(
      `r.results LIKE @memLike ESCAPE '\\' AND json_valid(r.results) AND EXISTS (SELECT 1 FROM json_each(r.results) j WHERE (CASE j.type WHEN 'object' THEN json_extract(j.value, '$.id') ELSE j.value END) = @memId)`,
    )
    params.memLike = `%"${likeEscape(f.memoryId)}"%`
    params.memId = f.memoryId
  }
  if (f.search) {
    parts.push(`(r.query LIKE @search ESCAPE '\\' OR r.cue LIKE @search ESCAPE '\\')`)
    params.search = `%${likeEscape(f.search)}%`
  }
  return { sql: parts.length ? parts.join(' AND ') : '1', params }
}
