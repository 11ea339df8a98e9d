/**
 * LangGraph checkpoint decoding: the `type` column says the serde.
 *  - "json": `@langchain/langgraph-checkpoint` JsonPlusSerializer (JS). LangChain objects are
 *    `{"lc":1,"type":"constructor","id":[…,"HumanMessage"],"kwargs":{…}}`.
 *  - "msgpack": Python `langgraph.checkpoint.serde.jsonplus` (github.com/langchain-ai/langgraph
 *    libs/checkpoint/langgraph/checkpoint/serde/jsonplus.py @ b941b82b379ea654245041de2fe5b1179b7fccce):
 *    ormsgpack with ext types 0 CONSTRUCTOR_SINGLE_ARG, 1 CONSTRUCTOR_POS_ARGS, 2 CONSTRUCTOR_KW_ARGS,
 *    3 METHOD_SINGLE_ARG, 4 PYDANTIC_V1, 5 PYDANTIC_V2, 6 NUMPY_ARRAY, 7 DELTA_SNAPSHOT; each ext's data
 *    is itself msgpack of (module, class, arg[, method]). Messages are pydantic v2 models (ext 5)
 *    whose arg is model_dump() (content, type "human"/"ai"/…, id, name, …).
 * Nothing is imported or constructed: ext payloads become plain objects tagged with their class.
 */
import { decode, ExtensionCodec } from '@msgpack/msgpack'

const CLASS = '__class'

function makeCodec(): ExtensionCodec {
  const codec = new ExtensionCodec()
  const inner = (data: Uint8Array): unknown => decode(data, { extensionCodec: codec, useBigInt64: false })
  const tuple = (data: Uint8Array): unknown[] => {
    const v = inner(data)
    return Array.isArray(v) ? v : [null, null, v]
  }
  // single arg (UUID, set, Enum…) and method single arg (datetime.fromisoformat): the argument itself
  codec.register({ type: 0, encode: () => null, decode: (d) => tuple(d)[2] })
  codec.register({ type: 3, encode: () => null, decode: (d) => tuple(d)[2] })
  codec.register({
    type: 1,
    encode: () => null,
    decode: (d) => {
      const [mod, cls, args] = tuple(d)
      return { [CLASS]: `${String(mod)}.${String(cls)}`, args }
    },
  })
  for (const type of [2, 4, 5]) {
    codec.register({
      type,
      encode: () => null,
      decode: (d) => {
        const [mod, cls, kwargs] = tuple(d)
        return { ...(kwargs && typeof kwargs === 'object' && !Array.isArray(kwargs) ? kwargs : { value: kwargs }), [CLASS]: `${String(mod)}.${String(cls)}` }
      },
    })
  }
  codec.register({ type: 6, encode: () => null, decode: () => null })
  codec.register({ type: 7, encode: () => null, decode: (d) => inner(d) })
  return codec
}

const CODEC = makeCodec()

/** Decode one serialized checkpoint (or write value). Throws on bytes it cannot read. */
export function decodeTyped(type: string | null, raw: unknown): unknown {
  const bytes = typeof raw === 'string' ? Buffer.from(raw, 'utf8') : raw instanceof Uint8Array ? raw : null
  if (bytes === null) throw new Error('not bytes')
  if (type === 'msgpack') return decode(bytes, { extensionCodec: CODEC })
  if (type === 'json' || type === null) return JSON.parse(Buffer.from(bytes).toString('utf8'))
  throw new Error(`unknown serde type ${type}`)
}

export interface DecodedMessage {
  id: string | null
  role: string | null
  /** LangChain class or `type` ("HumanMessage", "human", …) */
  type: string | null
  content: string
  name: string | null
  /** tool calls of an AI message, when any */
  toolCalls: unknown[] | null
  /** the call a ToolMessage answers */
  toolCallId: string | null
}

const ROLE_BY_TYPE: Record<string, string> = {
  human: 'user',
  user: 'user',
  ai: 'assistant',
  assistant: 'assistant',
  system: 'system',
  developer: 'system',
  tool: 'tool',
  function: 'tool',
}

function roleOfClass(cls: string): string | null {
  const name = cls.split('.').pop() ?? cls
  if (/^Human/.test(name)) return 'user'
  if (/^AI/.test(name)) return 'assistant'
  if (/^System/.test(name)) return 'system'
  if (/^(Tool|Function)/.test(name)) return 'tool'
  return null
}

/** Text of a LangChain content: a string, or the text blocks of a block list (others as JSON). */
export function contentText(c: unknown): string {
  if (typeof c === 'string') return c
  if (Array.isArray(c)) {
    const parts = c.map((b) =>
      typeof b === 'string' ? b : b && typeof b === 'object' && typeof (b as { text?: unknown }).text === 'string' ? (b as { text: string }).text : null,
    )
    const texts = parts.filter((p): p is string => p !== null)
    return texts.length ? texts.join('\n') : JSON.stringify(c)
  }
  return c === null || c === undefined ? '' : JSON.stringify(c)
}

/** One message of a `messages` channel, from either serde; null when it is not a message. */
export function toMessage(x: unknown): DecodedMessage | null {
  if (!x || typeof x !== 'object' || Array.isArray(x)) return null
  const o = x as Record<string, unknown>
  let cls: string | null = null
  let k: Record<string, unknown> = o
  if (o.lc === 1 && o.type === 'constructor' && Array.isArray(o.id)) {
    cls = String(o.id[o.id.length - 1])
    k = o.kwargs && typeof o.kwargs === 'object' ? (o.kwargs as Record<string, unknown>) : {}
  } else if (typeof o[CLASS] === 'string') cls = o[CLASS]
  if (!('content' in k)) return null
  const t = typeof k.type === 'string' ? k.type : null
  const role = (cls && roleOfClass(cls)) ?? (t && ROLE_BY_TYPE[t]) ?? (typeof k.role === 'string' ? (ROLE_BY_TYPE[k.role] ?? k.role) : null)
  const calls = Array.isArray(k.tool_calls) && k.tool_calls.length ? k.tool_calls : null
  return {
    id: typeof k.id === 'string' && k.id !== '' ? k.id : null,
    role,
    type: cls ? (cls.split('.').pop() ?? cls) : t,
    content: contentText(k.content),
    name: typeof k.name === 'string' ? k.name : null,
    toolCalls: calls,
    toolCallId: typeof k.tool_call_id === 'string' && k.tool_call_id !== '' ? k.tool_call_id : null,
  }
}

/** The `messages` channel of a decoded checkpoint, or null when the graph has none. */
export function messagesOf(checkpoint: unknown): DecodedMessage[] | null {
  if (!checkpoint || typeof checkpoint !== 'object') return null
  const values = (checkpoint as { channel_values?: unknown }).channel_values
  if (!values || typeof values !== 'object') return null
  let list = (values as Record<string, unknown>).messages
  // A delta channel's snapshot (JS `DeltaSnapshot {lg_name, value}`; Python ext 7 decodes to the value).
  if (list && typeof list === 'object' && (list as { lg_name?: unknown }).lg_name === 'DeltaSnapshot') list = (list as { value?: unknown }).value
  if (!Array.isArray(list)) return null
  return list.map(toMessage).filter((m): m is DecodedMessage => m !== null)
}

/** The checkpoint's own timestamp (`ts`, ISO) in epoch ms, or null. */
export function checkpointTs(checkpoint: unknown): number | null {
  const ts = checkpoint && typeof checkpoint === 'object' ? (checkpoint as { ts?: unknown }).ts : null
  if (typeof ts !== 'string') return null
  const t = Date.parse(ts)
  return Number.isNaN(t) ? null : t
}
