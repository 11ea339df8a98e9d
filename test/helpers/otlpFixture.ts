/**
 * OTLP/HTTP JSON payloads (ExportTraceServiceRequest, protobuf JSON mapping) built the way
 * the OpenTelemetry SDK exporters write them: attribute values wrapped as
 * `{stringValue | intValue (a string) | doubleValue | boolValue | arrayValue}`, hex ids,
 * nanosecond time strings.
 */
import crypto from 'node:crypto'

type Plain = string | number | boolean | Plain[]

function anyValue(v: Plain): Record<string, unknown> {
  if (typeof v === 'string') return { stringValue: v }
  if (typeof v === 'boolean') return { boolValue: v }
  if (typeof v === 'number') return Number.isInteger(v) ? { intValue: String(v) } : { doubleValue: v }
  return { arrayValue: { values: v.map(anyValue) } }
}

export const otlpAttrs = (o: Record<string, Plain>) => Object.entries(o).map(([key, v]) => ({ key, value: anyValue(v) }))

export const hexId = (bytes: number) => crypto.randomBytes(bytes).toString('hex')

export interface SpanSpec {
  traceId: string
  spanId?: string
  name: string
  /** epoch ms */
  start: number
  end: number
  attrs?: Record<string, Plain>
  events?: { name: string; at: number; attrs: Record<string, Plain> }[]
}

const nanos = (ms: number) => `${ms}000000`

export function otlpSpan(s: SpanSpec): Record<string, unknown> {
  return {
    traceId: s.traceId,
    spanId: s.spanId ?? hexId(8),
    name: s.name,
    kind: 1,
    startTimeUnixNano: nanos(s.start),
    endTimeUnixNano: nanos(s.end),
    attributes: otlpAttrs(s.attrs ?? {}),
    events: (s.events ?? []).map((e) => ({ timeUnixNano: nanos(e.at), name: e.name, attributes: otlpAttrs(e.attrs) })),
    status: {},
  }
}

/** One export request: the spans of one service. */
export function otlpPayload(service: string, spans: Record<string, unknown>[]): Record<string, unknown> {
  return {
    resourceSpans: [
      {
        resource: { attributes: otlpAttrs({ 'service.name': service, 'telemetry.sdk.language': 'python' }) },
        scopeSpans: [{ scope: { name: 'recallscope.test', version: '1' }, spans }],
      },
    ],
  }
}
