/**
 * OTLP/HTTP JSON trace payloads (`ExportTraceServiceRequest` in the protobuf JSON
 * mapping, opentelemetry-proto `opentelemetry/proto/trace/v1/trace.proto`) flattened to
 * spans with plain attribute values:
 *   {resourceSpans: [{resource: {attributes}, scopeSpans: [{scope: {name}, spans: [{traceId, spanId,
 *     parentSpanId, name, startTimeUnixNano, endTimeUnixNano, attributes, events: [{timeUnixNano, name, attributes}]}]}]}]}
 * `attributes` are `[{key, value: AnyValue}]` where AnyValue is one of stringValue,
 * boolValue, intValue (a decimal string or a number), doubleValue, arrayValue {values},
 * kvlistValue {values}, bytesValue (base64); ids are hex; times are nanosecond strings.
 * The pre-1.0 `instrumentationLibrarySpans` name is read too. A span without a trace
 * or span id, or without a start time, is skipped and counted.
 */
import { skip, type ReadStats } from '../types'

/** One span, flattened. Times are epoch ms. */
export interface FlatSpan {
  traceId: string
  spanId: string
  parentSpanId: string | null
  name: string
  start: number
  end: number
  attrs: Record<string, unknown>
  events: { name: string; at: number | null; attrs: Record<string, unknown> }[]
  /** the resource's attributes (service.name …) */
  resource: Record<string, unknown>
}

const isObj = (v: unknown): v is Record<string, unknown> => !!v && typeof v === 'object' && !Array.isArray(v)

/** An OTLP AnyValue as a plain value (int64 beyond 2^53 loses precision: ids are strings anyway). */
function anyValue(v: unknown, depth = 0): unknown {
  if (!isObj(v) || depth > 32) return null
  if ('stringValue' in v) return typeof v.stringValue === 'string' ? v.stringValue : null
  if ('boolValue' in v) return v.boolValue === true
  if ('intValue' in v) {
    const n = Number(v.intValue)
    return Number.isFinite(n) ? n : null
  }
  if ('doubleValue' in v) {
    const n = Number(v.doubleValue)
    return Number.isFinite(n) ? n : null
  }
  if ('arrayValue' in v) {
    const values = isObj(v.arrayValue) && Array.isArray(v.arrayValue.values) ? v.arrayValue.values : []
    return values.map((x) => anyValue(x, depth + 1))
  }
  if ('kvlistValue' in v) {
    const values = isObj(v.kvlistValue) && Array.isArray(v.kvlistValue.values) ? v.kvlistValue.values : []
    return attributes(values, depth + 1)
  }
  if ('bytesValue' in v) return typeof v.bytesValue === 'string' ? v.bytesValue : null
  return null
}

/** `[{key, value}]` → `{key: value}` (later keys win, as in the SDKs). */
function attributes(list: unknown, depth = 0): Record<string, unknown> {
  const out: Record<string, unknown> = {}
  if (!Array.isArray(list)) return out
  for (const kv of list) {
    if (isObj(kv) && typeof kv.key === 'string') out[kv.key] = anyValue(kv.value, depth)
  }
  return out
}

/** Nanoseconds (a decimal string, or a number) → epoch ms; null when missing or not a time. */
function nanosToMs(v: unknown): number | null {
  if (typeof v === 'number') return Number.isFinite(v) && v > 0 ? Math.floor(v / 1e6) : null
  if (typeof v !== 'string' || !/^\d{1,30}$/.test(v)) return null
  // BigInt keeps the nanosecond string exact; ms fit a double.
  const ms = Number(BigInt(v) / 1_000_000n)
  return ms > 0 ? ms : null
}

const id = (v: unknown): string | null => (typeof v === 'string' && /^[0-9a-fA-F]{8,64}$/.test(v) ? v.toLowerCase() : null)

/**
 * Every span of one OTLP JSON payload (`{resourceSpans: […]}`), in payload order.
 * `where` names the payload in skip reasons (a file line, "POST").
 */
export function* flattenSpans(payload: unknown, stats: ReadStats, where: string): Generator<FlatSpan> {
  if (!isObj(payload) || !Array.isArray(payload.resourceSpans)) {
    skip(stats, where, 'not an OTLP trace payload (no resourceSpans array)')
    return
  }
  for (const rs of payload.resourceSpans) {
    if (!isObj(rs)) continue
    const resource = attributes(isObj(rs.resource) ? rs.resource.attributes : null)
    const scopes = Array.isArray(rs.scopeSpans) ? rs.scopeSpans : Array.isArray(rs.instrumentationLibrarySpans) ? rs.instrumentationLibrarySpans : []
    for (const ss of scopes) {
      if (!isObj(ss) || !Array.isArray(ss.spans)) continue
      for (const s of ss.spans) {
        if (!isObj(s)) {
          skip(stats, where, 'a span that is not an object')
          continue
        }
        const traceId = id(s.traceId)
        const spanId = id(s.spanId)
        const start = nanosToMs(s.startTimeUnixNano)
        if (!traceId || !spanId || start === null) {
          skip(stats, where, `span ${typeof s.name === 'string' ? `"${s.name.slice(0, 80)}" ` : ''}without a hex traceId/spanId or a startTimeUnixNano`)
          continue
        }
        const events = Array.isArray(s.events)
          ? s.events
              .filter(isObj)
              .map((e) => ({ name: typeof e.name === 'string' ? e.name : '', at: nanosToMs(e.timeUnixNano), attrs: attributes(e.attributes) }))
          : []
        yield {
          traceId,
          spanId,
          parentSpanId: id(s.parentSpanId),
          name: typeof s.name === 'string' ? s.name : '',
          start,
          end: nanosToMs(s.endTimeUnixNano) ?? start,
          attrs: attributes(s.attributes),
          events,
          resource,
        }
      }
    }
  }
}
