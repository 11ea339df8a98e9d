/**
 * Checkpoint decoding units: Python's msgpack ext types and message shapes, built here with
 * @msgpack/msgpack the way jsonplus.py packs them (ext data = msgpack((module, class, arg[, method]))).
 */
import { encode, ExtensionCodec } from '@msgpack/msgpack'
import { describe, expect, it } from 'vitest'
import { contentText, decodeTyped, messagesOf, toMessage } from './decode'

class Ext {
  constructor(
    readonly type: number,
    readonly tuple: unknown[],
  ) {}
}
const codec = new ExtensionCodec()
for (const type of [0, 1, 2, 3, 4, 5, 7])
  codec.register({
    type,
    encode: (o: unknown) => (o instanceof Ext && o.type === type ? encode(o.tuple, { extensionCodec: codec }) : null),
    decode: () => null,
  })
const pack = (v: unknown) => encode(v, { extensionCodec: codec })

describe('LangGraph checkpoint decoding', () => {
  it('reads Python ext types: pydantic v2 messages, datetimes, UUIDs, sets, kwargs constructors', () => {
    const cp = decodeTyped(
      'msgpack',
      pack({
        ts: '2025-01-01T00:00:00+00:00',
        channel_values: {
          messages: [
            new Ext(5, ['langchain_core.messages.human', 'HumanMessage', { content: 'hi', type: 'human', id: 'a' }, 'model_validate_json']),
            new Ext(4, [
              'langchain_core.messages.ai',
              'AIMessage',
              {
                content: [
                  { type: 'text', text: 'hello' },
                  { type: 'text', text: 'there' },
                ],
                type: 'ai',
                id: 'b',
              },
            ]),
          ],
          when: new Ext(3, ['datetime', 'datetime', '2025-01-01T00:00:00+00:00', 'fromisoformat']),
          uid: new Ext(0, ['uuid', 'UUID', 'abcd']),
          tags: new Ext(0, ['builtins', 'set', ['x', 'y']]),
          where: new Ext(1, ['pathlib', 'PosixPath', ['/tmp', 'x']]),
          nt: new Ext(2, ['mymod', 'Point', { x: 1 }]),
        },
      }),
    ) as { channel_values: Record<string, unknown> }
    expect(cp.channel_values.when).toBe('2025-01-01T00:00:00+00:00')
    expect(cp.channel_values.uid).toBe('abcd')
    expect(cp.channel_values.tags).toEqual(['x', 'y'])
    expect(cp.channel_values.where).toEqual({ __class: 'pathlib.PosixPath', args: ['/tmp', 'x'] })
    expect(cp.channel_values.nt).toEqual({ x: 1, __class: 'mymod.Point' })
    expect(messagesOf(cp)).toEqual([
      { id: 'a', role: 'user', type: 'HumanMessage', content: 'hi', name: null, toolCalls: null, toolCallId: null },
      { id: 'b', role: 'assistant', type: 'AIMessage', content: 'hello\nthere', name: null, toolCalls: null, toolCallId: null },
    ])
  })

  it('unwraps a delta-channel snapshot (Python ext 7, JS DeltaSnapshot)', () => {
    const py = decodeTyped('msgpack', pack({ channel_values: { messages: new Ext(7, [{ role: 'user', content: 'x' }]) } }))
    // ext 7 carries the value itself
    expect(py).toEqual({ channel_values: { messages: [{ role: 'user', content: 'x' }] } })
    expect(messagesOf(py)?.map((m) => m.role)).toEqual(['user'])
    const js = decodeTyped(
      'json',
      Buffer.from(JSON.stringify({ channel_values: { messages: { lg_name: 'DeltaSnapshot', value: [{ type: 'ai', content: 'y' }] } } })),
    )
    expect(messagesOf(js)?.map((m) => [m.role, m.content])).toEqual([['assistant', 'y']])
  })

  it('maps message shapes to roles and text; refuses what is not a message', () => {
    expect(
      toMessage({ lc: 1, type: 'constructor', id: ['langchain_core', 'messages', 'ToolMessage'], kwargs: { content: 'ok', tool_call_id: 'c' } })?.role,
    ).toBe('tool')
    expect(toMessage({ role: 'developer', content: 'be brief' })?.role).toBe('system')
    expect(toMessage({ type: 'function', content: 'f' })?.role).toBe('tool')
    expect(toMessage({ hello: 1 })).toBeNull()
    expect(toMessage('text')).toBeNull()
    expect(contentText([{ type: 'image_url', image_url: 'x' }])).toBe('[{"type":"image_url","image_url":"x"}]')
    expect(() => decodeTyped('pickle', Buffer.from('x'))).toThrow(/unknown serde/)
    expect(messagesOf({ channel_values: {} })).toBeNull()
  })
})
