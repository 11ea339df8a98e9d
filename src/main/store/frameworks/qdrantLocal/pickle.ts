/**
 * A pickle reader that never executes anything (Qdrant local mode stores every point as a
 * pickled pydantic model). Python's own `pickle.loads` imports modules and calls whatever
 * callables the stream names; this reader only builds plain values:
 *  - a class reference (GLOBAL / STACK_GLOBAL) becomes `{ $class: 'module.Name' }`;
 *  - instantiation (NEWOBJ, NEWOBJ_EX, REDUCE, OBJ, INST) becomes a `PickledObject`
 *    `{ $class, $args, $state }`, and BUILD sets its `$state` (pydantic's `__getstate__`
 *    dict: `__dict__` holds the fields);
 *  - persistent ids and extensions are refused.
 * Opcodes of protocols 0–5 that carry data are read (ints, floats, strings, bytes, lists,
 * tuples, dicts, sets, memo); anything unknown is an error naming the opcode, never a guess.
 * Reference: CPython Lib/pickletools.py (the opcode table) and Lib/pickle.py (_Unpickler).
 * Sizes are checked against the input before anything is allocated, so a hostile length
 * field cannot make it allocate more than the input's size.
 */

export interface PickledObject {
  $class: string
  $args: unknown[]
  $state: unknown
}

class PickleError extends Error {
  override name = 'PickleError'
}

type Item = unknown

function isClassRef(v: unknown): v is { $class: string } {
  return !!v && typeof v === 'object' && '$class' in v && !('$args' in v)
}

function instantiate(cls: unknown, args: unknown[]): PickledObject {
  const name = isClassRef(cls) ? cls.$class : typeof cls === 'string' ? cls : '(unknown)'
  return { $class: name, $args: args, $state: null }
}

/** Parse one pickle; throws PickleError on anything malformed or not data. */
export function readPickle(buf: Uint8Array): unknown {
  const view = new DataView(buf.buffer, buf.byteOffset, buf.byteLength)
  let pos = 0
  const stack: Item[] = []
  const metastack: Item[][] = []
  const memo = new Map<number, Item>()
  const need = (n: number) => {
    if (n < 0 || pos + n > buf.length) throw new PickleError(`truncated pickle at byte ${pos} (needs ${n} more)`)
  }
  const u8 = () => {
    need(1)
    return buf[pos++]
  }
  const u16 = () => {
    need(2)
    const v = view.getUint16(pos, true)
    pos += 2
    return v
  }
  const u32 = () => {
    need(4)
    const v = view.getUint32(pos, true)
    pos += 4
    return v
  }
  const i32 = () => {
    need(4)
    const v = view.getInt32(pos, true)
    pos += 4
    return v
  }
  const u64 = () => {
    need(8)
    const v = view.getBigUint64(pos, true)
    pos += 8
    if (v > BigInt(Number.MAX_SAFE_INTEGER)) throw new PickleError('length too large')
    return Number(v)
  }
  const bytes = (n: number) => {
    need(n)
    const b = buf.subarray(pos, pos + n)
    pos += n
    return b
  }
  const utf8 = (n: number) => new TextDecoder('utf-8', { fatal: false }).decode(bytes(n))
  const line = () => {
    const end = buf.indexOf(10, pos)
    if (end < 0) throw new PickleError('unterminated text line')
    const s = new TextDecoder('latin1').decode(buf.subarray(pos, end))
    pos = end + 1
    return s
  }
  const pop = () => {
    if (stack.length === 0) throw new PickleError('stack underflow')
    return stack.pop()
  }
  const top = () => {
    if (stack.length === 0) throw new PickleError('stack underflow')
    return stack[stack.length - 1]
  }
  const popMark = (): Item[] => {
    const items = stack.splice(0)
    const prev = metastack.pop()
    if (!prev) throw new PickleError('MARK missing')
    stack.push(...prev)
    return items
  }
  const signedLE = (b: Uint8Array): number | string => {
    if (b.length === 0) return 0
    let v = 0n
    for (let i = b.length - 1; i >= 0; i--) v = (v << 8n) | BigInt(b[i])
    if (b[b.length - 1] & 0x80) v -= 1n << BigInt(b.length * 8)
    return v >= BigInt(Number.MIN_SAFE_INTEGER) && v <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(v) : v.toString()
  }
  const setItems = (target: unknown, items: Item[]) => {
    if (!target || typeof target !== 'object' || Array.isArray(target)) throw new PickleError('SETITEMS on a non-dict')
    for (let i = 0; i + 1 < items.length; i += 2) (target as Record<string, unknown>)[keyOf(items[i])] = items[i + 1]
  }
  const addItems = (target: unknown, items: Item[]) => {
    if (!Array.isArray(target)) throw new PickleError('APPENDS/ADDITEMS on a non-list')
    target.push(...items)
  }

  for (;;) {
    const op = u8()
    switch (op) {
      case 0x80: // PROTO
        u8()
        break
      case 0x95: // FRAME
        u64()
        break
      case 0x2e: // STOP
        if (stack.length !== 1) throw new PickleError(`STOP with ${stack.length} items on the stack`)
        return stack[0]
      case 0x28: // MARK
        metastack.push(stack.splice(0))
        break
      case 0x4e: // NONE
        stack.push(null)
        break
      case 0x88: // NEWTRUE
        stack.push(true)
        break
      case 0x89: // NEWFALSE
        stack.push(false)
        break
      case 0x4b: // BININT1
        stack.push(u8())
        break
      case 0x4d: // BININT2
        stack.push(u16())
        break
      case 0x4a: // BININT
        stack.push(i32())
        break
      case 0x8a: // LONG1
        stack.push(signedLE(bytes(u8())))
        break
      case 0x8b: // LONG4
        stack.push(signedLE(bytes(u32())))
        break
      case 0x47: // BINFLOAT (big-endian double)
        need(8)
        stack.push(view.getFloat64(pos, false))
        pos += 8
        break
      case 0x49: {
        // INT (text; also 00/01 as False/True)
        const s = line().trim()
        stack.push(s === '00' ? false : s === '01' ? true : Number(s))
        break
      }
      case 0x4c: // LONG (text)
        stack.push(Number(line().trim().replace(/L$/, '')))
        break
      case 0x46: // FLOAT (text)
        stack.push(Number(line().trim()))
        break
      case 0x8c: // SHORT_BINUNICODE
        stack.push(utf8(u8()))
        break
      case 0x58: // BINUNICODE
        stack.push(utf8(u32()))
        break
      case 0x8d: // BINUNICODE8
        stack.push(utf8(u64()))
        break
      case 0x56: // UNICODE (raw-unicode-escape line)
        stack.push(line())
        break
      case 0x55: // SHORT_BINSTRING
        stack.push(new TextDecoder('latin1').decode(bytes(u8())))
        break
      case 0x54: // BINSTRING
        stack.push(new TextDecoder('latin1').decode(bytes(u32())))
        break
      case 0x43: // SHORT_BINBYTES
        stack.push(Uint8Array.from(bytes(u8())))
        break
      case 0x42: // BINBYTES
        stack.push(Uint8Array.from(bytes(u32())))
        break
      case 0x8e: // BINBYTES8
        stack.push(Uint8Array.from(bytes(u64())))
        break
      case 0x96: // BYTEARRAY8
        stack.push(Uint8Array.from(bytes(u64())))
        break
      case 0x5d: // EMPTY_LIST
        stack.push([])
        break
      case 0x61: {
        // APPEND
        const v = pop()
        addItems(top(), [v])
        break
      }
      case 0x65: {
        // APPENDS
        const items = popMark()
        addItems(top(), items)
        break
      }
      case 0x6c: // LIST
        stack.push(popMark())
        break
      case 0x29: // EMPTY_TUPLE
        stack.push([])
        break
      case 0x85: // TUPLE1
        stack.push([pop()])
        break
      case 0x86: {
        // TUPLE2
        const b = pop()
        const a = pop()
        stack.push([a, b])
        break
      }
      case 0x87: {
        // TUPLE3
        const c = pop()
        const b = pop()
        const a = pop()
        stack.push([a, b, c])
        break
      }
      case 0x74: // TUPLE
        stack.push(popMark())
        break
      case 0x7d: // EMPTY_DICT
        stack.push({})
        break
      case 0x64: {
        // DICT
        const d = {}
        setItems(d, popMark())
        stack.push(d)
        break
      }
      case 0x73: {
        // SETITEM
        const v = pop()
        const k = pop()
        setItems(top(), [k, v])
        break
      }
      case 0x75: {
        // SETITEMS
        const items = popMark()
        setItems(top(), items)
        break
      }
      case 0x8f: // EMPTY_SET
        stack.push([])
        break
      case 0x90: {
        // ADDITEMS
        const items = popMark()
        addItems(top(), items)
        break
      }
      case 0x91: // FROZENSET
        stack.push(popMark())
        break
      case 0x94: // MEMOIZE
        memo.set(memo.size, top())
        break
      case 0x71: // BINPUT
        memo.set(u8(), top())
        break
      case 0x72: // LONG_BINPUT
        memo.set(u32(), top())
        break
      case 0x70: // PUT
        memo.set(Number(line()), top())
        break
      case 0x68: // BINGET
      case 0x6a: // LONG_BINGET
      case 0x67: {
        // GET
        const k = op === 0x68 ? u8() : op === 0x6a ? u32() : Number(line())
        if (!memo.has(k)) throw new PickleError(`memo ${k} missing`)
        stack.push(memo.get(k))
        break
      }
      case 0x63: {
        // GLOBAL "module\nname\n"
        const mod = line()
        stack.push({ $class: `${mod}.${line()}` })
        break
      }
      case 0x93: {
        // STACK_GLOBAL
        const name = pop()
        const mod = pop()
        if (typeof name !== 'string' || typeof mod !== 'string') throw new PickleError('STACK_GLOBAL needs two strings')
        stack.push({ $class: `${mod}.${name}` })
        break
      }
      case 0x81: {
        // NEWOBJ cls args
        const args = pop()
        stack.push(instantiate(pop(), Array.isArray(args) ? args : [args]))
        break
      }
      case 0x92: {
        // NEWOBJ_EX cls args kwargs
        const kwargs = pop()
        const args = pop()
        const o = instantiate(pop(), Array.isArray(args) ? args : [args])
        o.$args.push(kwargs)
        stack.push(o)
        break
      }
      case 0x52: {
        // REDUCE callable args: recorded, never called
        const args = pop()
        stack.push(instantiate(pop(), Array.isArray(args) ? args : [args]))
        break
      }
      case 0x6f: {
        // OBJ: MARK cls args… OBJ
        const items = popMark()
        stack.push(instantiate(items[0], items.slice(1)))
        break
      }
      case 0x69: {
        // INST "module\nname\n" MARK args…
        const mod = line()
        const name = line()
        stack.push(instantiate({ $class: `${mod}.${name}` }, popMark()))
        break
      }
      case 0x62: {
        // BUILD obj state
        const state = pop()
        const obj = top()
        if (obj && typeof obj === 'object' && '$args' in obj) (obj as PickledObject).$state = state
        else if (obj && typeof obj === 'object' && state && typeof state === 'object' && !Array.isArray(obj)) Object.assign(obj, state)
        break
      }
      case 0x30: // POP
        pop()
        break
      case 0x32: // DUP
        stack.push(top())
        break
      case 0x31: // POP_MARK
        popMark()
        break
      case 0x97: // NEXT_BUFFER
      case 0x98: // READONLY_BUFFER
        throw new PickleError('out-of-band buffers are not supported')
      case 0x50: // PERSID
      case 0x51: // BINPERSID
        throw new PickleError('persistent ids are not supported')
      case 0x82: // EXT1
      case 0x83: // EXT2
      case 0x84: // EXT4
        throw new PickleError('extension codes are not supported')
      default:
        throw new PickleError(`unknown opcode 0x${op.toString(16)} at byte ${pos - 1}`)
    }
    if (stack.length + metastack.length > 1_000_000) throw new PickleError('pickle too deep')
  }
}

function keyOf(k: unknown): string {
  if (typeof k === 'string') return k
  if (typeof k === 'number' || typeof k === 'boolean' || k === null) return String(k)
  return JSON.stringify(k)
}

/**
 * The fields of a pickled pydantic (v1 or v2) model or plain object: v2's `__getstate__`
 * keeps them in `__dict__`, v1's in `__dict__` too (with `__fields_set__`); anything else
 * with a dict state is taken as is.
 */
export function fieldsOf(v: unknown): Record<string, unknown> | null {
  if (!v || typeof v !== 'object') return null
  if ('$args' in v) {
    const st = (v as PickledObject).$state
    if (st && typeof st === 'object' && !Array.isArray(st)) {
      const d = (st as Record<string, unknown>).__dict__
      return d && typeof d === 'object' && !Array.isArray(d) ? (d as Record<string, unknown>) : (st as Record<string, unknown>)
    }
    // a dataclass-style tuple state (dict, slots)
    if (Array.isArray(st) && st[0] && typeof st[0] === 'object') return st[0] as Record<string, unknown>
    return null
  }
  return Array.isArray(v) ? null : (v as Record<string, unknown>)
}
