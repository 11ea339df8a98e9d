/**
 * Row decoding. Foreign rows are untrusted: bad JSON, unknown enums, odd types.
 * Decoding never throws; what it cannot read it counts (MalformedCounts) and
 * replaces with null.
 */
import { KINDS, ROLES, TIERS, type Kind, type MalformedCounts, type Memory, type Role, type Session, type Tier } from '../../shared/types'
import { parseJsonSafe } from '../safety/json'

export function emptyMalformed(): MalformedCounts {
  return { badMetadata: 0, badVectorShape: 0, nonFiniteVector: 0, wrongDimension: 0, unknownRole: 0, unknownKind: 0, unknownTier: 0, badTimestamp: 0 }
}

/** The canonical enum values, as sets for membership checks (decoding and importers). */
export const ROLE_SET: ReadonlySet<string> = new Set<string>(ROLES)
export const KIND_SET: ReadonlySet<string> = new Set<string>(KINDS)
export const TIER_SET: ReadonlySet<string> = new Set<string>(TIERS)

function num(v: unknown): number | null {
  if (v === null || v === undefined) return null
  if (typeof v === 'bigint') return Number(v)
  if (typeof v === 'number') return Number.isFinite(v) ? v : null
  if (typeof v === 'string' && v.trim() !== '' && Number.isFinite(Number(v))) return Number(v)
  return null
}

function str(v: unknown): string | null {
  if (v === null || v === undefined) return null
  return typeof v === 'string' ? v : cellText(v)
}

/**
 * A SQLite cell as text: the driver hands back strings, numbers, bigints, Buffers
 * (BLOBs, read as UTF-8) or null; anything else (a value built by a reader) is JSON.
 */
export function cellText(v: unknown): string {
  if (typeof v === 'string') return v
  if (typeof v === 'number' || typeof v === 'bigint' || typeof v === 'boolean') return String(v)
  if (Buffer.isBuffer(v)) return v.toString('utf8')
  if (v === null || v === undefined) return ''
  return JSON.stringify(v) ?? ''
}

/** The largest |epoch ms| a JS Date holds (±100,000,000 days); beyond it `toISOString()` throws. */
export const MAX_DATE_MS = 8.64e15

/**
 * Timestamps: epoch ms as number; ISO strings are accepted too (some agents write them). A value
 * outside Date's range (±8.64e15 ms) is unreadable: null, like an unparseable string, so no
 * formatting downstream ever throws on it.
 */
export function toMs(v: unknown): number | null {
  const n = num(v)
  if (n !== null) return Math.abs(n) <= MAX_DATE_MS ? n : null
  if (typeof v === 'string') {
    const t = Date.parse(v)
    return Number.isNaN(t) ? null : t
  }
  return null
}

/** Was a timestamp cell present but unreadable (not empty, and toMs could not read it)? */
function unreadableTime(v: unknown): boolean {
  return v !== null && v !== undefined && v !== '' && toMs(v) === null
}

export function parseJson(text: unknown): { ok: true; value: unknown } | { ok: false } {
  if (text === null || text === undefined) return { ok: true, value: null }
  if (typeof text !== 'string') return { ok: false }
  const r = parseJsonSafe(text) // depth-limited (safety/json): 5000-deep metadata is malformed, not a stack overflow
  return r.ok ? r : { ok: false }
}

/** A row as the driver returns it (canonical column names), before decoding. */
export type RawRow = Record<string, unknown>

/** Decode one canonical memory row. `counts` (optional) is incremented for malformed fields. */
export function decodeMemory(r: RawRow, counts?: MalformedCounts): Memory {
  const meta = parseJson(r.metadata)
  if (!meta.ok && counts) counts.badMetadata++
  const role = str(r.role)
  const kind = str(r.kind)
  const tier = str(r.tier)
  if (role !== null && !ROLE_SET.has(role) && counts) counts.unknownRole++
  if (kind !== null && !KIND_SET.has(kind) && counts) counts.unknownKind++
  if (tier !== null && !TIER_SET.has(tier) && counts) counts.unknownTier++
  if (counts && (unreadableTime(r.created_at) || unreadableTime(r.last_used_at))) counts.badTimestamp++
  const sal = num(r.salience)
  return {
    id: String(r.id),
    agentId: str(r.agent_id),
    userId: str(r.user_id),
    sessionId: str(r.session_id),
    role: role !== null && ROLE_SET.has(role) ? (role as Role) : null,
    kind: kind !== null && KIND_SET.has(kind) ? (kind as Kind) : null,
    tier: tier !== null && TIER_SET.has(tier) ? (tier as Tier) : null,
    content: str(r.content) ?? '',
    summary: str(r.summary),
    salience: sal === null ? null : Math.min(1, Math.max(0, sal)),
    createdAt: toMs(r.created_at) ?? 0,
    lastUsedAt: toMs(r.last_used_at),
    useCount: num(r.use_count),
    turn: num(r.turn),
    source: str(r.source),
    metadata: meta.ok ? meta.value : null,
    tenantId: str(r.tenant_id),
  }
}

export function decodeSession(r: RawRow): Session {
  return {
    id: String(r.id),
    agentId: str(r.agent_id),
    userId: str(r.user_id),
    tenantId: str(r.tenant_id),
    startedAt: toMs(r.started_at),
    endedAt: toMs(r.ended_at),
    summary: str(r.summary),
    isArchived: Boolean(num(r.is_archived)),
    memoryCount: num(r.memory_count) ?? 0,
  }
}

/** Stored vectors are little-endian; on LE hosts (x86, ARM) bytes copy straight into a Float32Array. */
export const LITTLE_ENDIAN = new Uint8Array(new Uint32Array([1]).buffer)[0] === 1

export type VectorProblem = 'badVectorShape' | 'nonFiniteVector' | 'wrongDimension'

/**
 * Decode a stored vector: little-endian float32 BLOB or a JSON array of numbers.
 * Returns the vector or the reason it was rejected.
 */
export function decodeVector(raw: unknown, expectedDim: number | null): Float32Array | VectorProblem {
  let v: Float32Array
  if (raw instanceof Uint8Array) {
    if (raw.byteLength % 4 !== 0 || raw.byteLength === 0) return 'badVectorShape'
    const n = raw.byteLength / 4
    v = new Float32Array(n)
    if (LITTLE_ENDIAN) new Uint8Array(v.buffer).set(raw)
    else {
      const dv = new DataView(raw.buffer, raw.byteOffset, raw.byteLength)
      for (let i = 0; i < n; i++) v[i] = dv.getFloat32(i * 4, true)
    }
  } else if (typeof raw === 'string') {
    let arr: unknown
    try {
      arr = JSON.parse(raw)
    } catch {
      return 'badVectorShape'
    }
    if (!Array.isArray(arr) || arr.length === 0) return 'badVectorShape'
    v = new Float32Array(arr.length)
    for (let i = 0; i < arr.length; i++) {
      const x: unknown = arr[i]
      if (typeof x !== 'number') return x === null ? 'nonFiniteVector' : 'badVectorShape'
      v[i] = x
    }
  } else {
    return 'badVectorShape'
  }
  for (let i = 0; i < v.length; i++) if (!Number.isFinite(v[i])) return 'nonFiniteVector'
  if (expectedDim !== null && v.length !== expectedDim) return 'wrongDimension'
  return v
}

/** Encode a vector as the canonical little-endian float32 BLOB. */
export function encodeVector(v: ArrayLike<number>): Buffer {
  const buf = Buffer.allocUnsafe(v.length * 4)
  for (let i = 0; i < v.length; i++) buf.writeFloatLE(v[i], i * 4)
  return buf
}
