/**
 * The WebAssembly encoding helpers the hand-assembled kernels are written with (dotKernel.ts, sixBitKernels.ts):
 * LEB128 numbers, sections, and the instructions used, by their opcode numbers in the WebAssembly core and SIMD
 * specifications.
 */

export const I32 = 0x7f
export const F64 = 0x7c
export const V128 = 0x7b

export const uleb = (n: number): number[] => {
  const o: number[] = []
  do {
    let b = n & 0x7f
    n >>>= 7
    if (n) b |= 0x80
    o.push(b)
  } while (n)
  return o
}
export const sleb = (n: number): number[] => {
  const o: number[] = []
  for (;;) {
    const b = n & 0x7f
    n >>= 7
    if ((n === 0 && !(b & 0x40)) || (n === -1 && b & 0x40)) return [...o, b]
    o.push(b | 0x80)
  }
}
export const name = (s: string) => [...uleb(s.length), ...Array.from(s, (c) => c.charCodeAt(0))]
export const vec = (items: number[][]) => [...uleb(items.length), ...items.flat()]
export const section = (id: number, body: number[]) => [id, ...uleb(body.length), ...body]

// Instructions used (opcode numbers from the WebAssembly core + SIMD specs).
export const get = (i: number) => [0x20, ...uleb(i)]
export const set = (i: number) => [0x21, ...uleb(i)]
export const i32 = (n: number) => [0x41, ...sleb(n)]
export const f64zero = [0x44, 0, 0, 0, 0, 0, 0, 0, 0]
export const add32 = [0x6a]
export const and32 = [0x71]
export const shl32 = [0x74]
export const geU32 = [0x4f]
export const f64add = [0xa0]
export const f64mul = [0xa2]
export const f32load = (off: number) => [0x2a, 2, ...uleb(off)]
export const f64load = (off: number) => [0x2b, 3, ...uleb(off)]
export const f64store = (off: number) => [0x39, 3, ...uleb(off)]
export const f64promote = [0xbb]
export const simd = (op: number, ...imm: number[]) => [0xfd, ...uleb(op), ...imm]
export const v128load = (off: number) => simd(0x00, 0, ...uleb(off))
export const load64zero = (off: number) => simd(0x5d, 0, ...uleb(off))
export const splatF64 = simd(0x14)
export const lane = (l: number) => simd(0x21, l)
export const addF64x2 = simd(0xf0)
export const mulF64x2 = simd(0xf2)
export const promoteLow = simd(0x5f)
export const block = [0x02, 0x40]
export const loop = [0x03, 0x40]
export const end = [0x0b]
export const br = (d: number) => [0x0c, d]
export const brIf = (d: number) => [0x0d, d]
export const i32x4splat = simd(0x11)
export const i32x4lane = (l: number) => simd(0x1b, l)
export const dotI16 = simd(0xba)
export const addI32x4 = simd(0xae)
export const i32store = (off: number) => [0x36, 2, ...uleb(off)]
const i32load = (off: number) => [0x28, 2, ...uleb(off)]
export const zero4 = (local: number) => [...i32(0), ...i32x4splat, ...set(local)]
export const mul32 = [0x6c]
export const v128store = (off: number) => simd(0x0b, 0, ...uleb(off))
export const andV = simd(0x4e)
export const step = (local: number, by: number) => [...get(local), ...i32(by), ...add32, ...set(local)]

const drop = [0x1a]
const gtU32 = [0x4b]
const ltU32 = [0x49]
const select = [0x1b]
/**
 * Every cache line of the row at local `p` (its last 4 bytes at p + local `last`), a 4-byte load each, dropped:
 * the load is what counts, and it stays (it could trap). Three lines a turn (o, o + 64, o + 128, counted in local
 * `o`), each offset at most `last`, so no load leaves the row. A scan that reads a row as it computes waits on
 * each line as it comes (the kernels here read their rows far faster from cache than from memory, and the two
 * times added up); touched first, the row's misses go out together. One line a turn did not help (the 6-bit scan:
 * 47.8 ms against 47.4).
 */
export const touchRow = (p: number, o: number, last: number): number[] => {
  const at = (k: number) => [
    ...get(p),
    ...get(o), ...i32(64 * k), ...add32, ...get(last), ...get(o), ...i32(64 * k), ...add32, ...get(last), ...ltU32, ...select,
    ...add32, ...i32load(0), ...drop,
  ] // prettier-ignore
  return [
    ...i32(0), ...set(o),
    ...block, ...loop,
    ...get(o), ...get(last), ...gtU32, ...brIf(1),
    ...at(0), ...at(1), ...at(2),
    ...step(o, 192),
    ...br(0), ...end, ...end,
  ] // prettier-ignore
}
