/**
 * The dense scan's inner loop as a tiny WebAssembly SIMD module: the dot product
 * of a float64 query with every float32 row of a matrix that lives in a
 * WebAssembly.Memory (the VectorIndex allocates its matrix there).
 *
 * Bit-identical to `dotRow` in recall/dense.ts, which every other path uses:
 * dotRow keeps four float64 sums s0..s3 (element i goes to s[i mod 4]), adds
 * the remainder to s0 and returns (s0 + s1) + (s2 + s3). Here two f64x2
 * accumulators hold the same four sums lane for lane, each element is widened
 * to float64 exactly (promote) and multiplied then added with IEEE rounding (no
 * fused multiply-add in WebAssembly), in the same order. So a similarity is the
 * same number whichever path computed it (dense.test.ts checks every bit).
 *
 * 3–6× faster than the JS loop on 2 cores: near the memory-bandwidth floor.
 * The module is assembled below from its instruction list (no toolchain, no
 * opaque blob); `dotKernelAvailable()` is false where WebAssembly SIMD is not.
 *
 *   (func (export "dotAll") (param $data i32) (param $n i32) (param $dim i32) (param $q i32) (param $out i32)
 *     for r in 0..n:                                   ;; p walks the matrix, qp the query
 *       a = b = f64x2(0, 0); qp = q
 *       for i in 0..dim & ~3 step 4:
 *         a += promote(load64_zero(p))     * v128.load(qp)        ;; elements i, i+1   → s0, s1
 *         b += promote(load64_zero(p + 8)) * v128.load(qp + 16)   ;; elements i+2, i+3 → s2, s3
 *       s0 = a[0]; for the rest: s0 += f64(f32.load p) * f64.load qp
 *       out[r] = (s0 + a[1]) + (b[0] + b[1])
 */

const I32 = 0x7f
const F64 = 0x7c
const V128 = 0x7b

const uleb = (n: number): number[] => {
  const o: number[] = []
  do {
    let b = n & 0x7f
    n >>>= 7
    if (n) b |= 0x80
    o.push(b)
  } while (n)
  return o
}
const sleb = (n: number): number[] => {
  const o: number[] = []
  for (;;) {
    const b = n & 0x7f
    n >>= 7
    if ((n === 0 && !(b & 0x40)) || (n === -1 && b & 0x40)) return [...o, b]
    o.push(b | 0x80)
  }
}
const name = (s: string) => [...uleb(s.length), ...Array.from(s, (c) => c.charCodeAt(0))]
const vec = (items: number[][]) => [...uleb(items.length), ...items.flat()]
const section = (id: number, body: number[]) => [id, ...uleb(body.length), ...body]

// Instructions used (opcode numbers from the WebAssembly core + SIMD specs).
const get = (i: number) => [0x20, ...uleb(i)]
const set = (i: number) => [0x21, ...uleb(i)]
const i32 = (n: number) => [0x41, ...sleb(n)]
const f64zero = [0x44, 0, 0, 0, 0, 0, 0, 0, 0]
const add32 = [0x6a]
const and32 = [0x71]
const shl32 = [0x74]
const geU32 = [0x4f]
const f64add = [0xa0]
const f64mul = [0xa2]
const f32load = (off: number) => [0x2a, 2, ...uleb(off)]
const f64load = (off: number) => [0x2b, 3, ...uleb(off)]
const f64store = (off: number) => [0x39, 3, ...uleb(off)]
const f64promote = [0xbb]
const simd = (op: number, ...imm: number[]) => [0xfd, ...uleb(op), ...imm]
const v128load = (off: number) => simd(0x00, 0, ...uleb(off))
const load64zero = (off: number) => simd(0x5d, 0, ...uleb(off))
const splatF64 = simd(0x14)
const lane = (l: number) => simd(0x21, l)
const addF64x2 = simd(0xf0)
const mulF64x2 = simd(0xf2)
const promoteLow = simd(0x5f)
const block = [0x02, 0x40]
const loop = [0x03, 0x40]
const end = [0x0b]
const br = (d: number) => [0x0c, d]
const brIf = (d: number) => [0x0d, d]

// params 0..4: data n dim q out · locals: 5 r, 6 p, 7 qp, 8 i, 9 dim4 (i32) · 10 a, 11 b (v128) · 12 s0 (f64)
const [DATA, N, DIM, Q, OUT, R, P, QP, I, DIM4, A, B, S0] = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12]
const step = (local: number, by: number) => [...get(local), ...i32(by), ...add32, ...set(local)]

const BODY = [
  ...get(DIM), ...i32(-4), ...and32, ...set(DIM4),
  ...get(DATA), ...set(P),
  ...i32(0), ...set(R),
  ...block, ...loop, // rows
  ...get(R), ...get(N), ...geU32, ...brIf(1),
  ...f64zero, ...splatF64, ...set(A),
  ...f64zero, ...splatF64, ...set(B),
  ...get(Q), ...set(QP),
  ...i32(0), ...set(I),
  ...block, ...loop, // four elements at a time
  ...get(I), ...get(DIM4), ...geU32, ...brIf(1),
  ...get(A), ...get(P), ...load64zero(0), ...promoteLow, ...get(QP), ...v128load(0), ...mulF64x2, ...addF64x2, ...set(A),
  ...get(B), ...get(P), ...load64zero(8), ...promoteLow, ...get(QP), ...v128load(16), ...mulF64x2, ...addF64x2, ...set(B),
  ...step(P, 16), ...step(QP, 32), ...step(I, 4),
  ...br(0), ...end, ...end,
  ...get(A), ...lane(0), ...set(S0),
  ...block, ...loop, // the remainder, into s0
  ...get(I), ...get(DIM), ...geU32, ...brIf(1),
  ...get(S0), ...get(P), ...f32load(0), ...f64promote, ...get(QP), ...f64load(0), ...f64mul, ...f64add, ...set(S0),
  ...step(P, 4), ...step(QP, 8), ...step(I, 1),
  ...br(0), ...end, ...end,
  ...get(OUT), ...get(R), ...i32(3), ...shl32, ...add32,
  ...get(S0), ...get(A), ...lane(1), ...f64add,
  ...get(B), ...lane(0), ...get(B), ...lane(1), ...f64add,
  ...f64add, ...f64store(0),
  ...step(R, 1),
  ...br(0), ...end, ...end,
  ...end,
] // prettier-ignore

const FUNC = [
  ...vec([
    [...uleb(5), I32],
    [...uleb(2), V128],
    [...uleb(1), F64],
  ]),
  ...BODY,
]

/** The module: imports env.mem, exports dotAll(data, n, dim, q, out). */
const DOT_KERNEL_WASM = Uint8Array.from([
  0x00, 0x61, 0x73, 0x6d, 1, 0, 0, 0,
  ...section(1, vec([[0x60, ...vec([[I32], [I32], [I32], [I32], [I32]]), 0]])), // type: (i32 ×5) → ()
  ...section(2, vec([[...name('env'), ...name('mem'), 0x02, 0x00, 1]])), // import memory, min 1 page
  ...section(3, vec([[0]])),
  ...section(7, vec([[...name('dotAll'), 0x00, 0]])),
  ...section(10, vec([[...uleb(FUNC.length), ...FUNC]])),
]) // prettier-ignore

/** The slice of the WebAssembly API used here (the node typings do not declare it: lib is ES2023 without DOM). */
export interface WasmMemory {
  readonly buffer: ArrayBuffer
  grow(deltaPages: number): number
}
interface WasmApi {
  validate(bytes: Uint8Array): boolean
  Module: new (bytes: Uint8Array) => object
  Instance: new (module: object, imports: object) => { exports: Record<string, unknown> }
  Memory: new (desc: { initial: number; maximum?: number }) => WasmMemory
}
const WASM = (globalThis as { WebAssembly?: WasmApi }).WebAssembly

let compiled: object | null | undefined

/** The compiled module, or null where WebAssembly SIMD is unavailable (the JS loop is used then). */
function kernelModule(): object | null {
  if (compiled === undefined) {
    try {
      compiled = WASM && WASM.validate(DOT_KERNEL_WASM) ? new WASM.Module(DOT_KERNEL_WASM) : null
    } catch {
      compiled = null
    }
  }
  return compiled
}

export function dotKernelAvailable(): boolean {
  return kernelModule() !== null
}

/** A WebAssembly memory of `pages` × 64 KiB (throws a RangeError when the address space is short). */
export function wasmMemory(pages: number): WasmMemory {
  if (!WASM) throw new RangeError('WebAssembly is not available')
  return new WASM.Memory({ initial: pages })
}

export type DotAll = (data: number, n: number, dim: number, q: number, out: number) => void

/** An instance bound to `memory`, or null without SIMD. */
export function dotKernel(memory: WasmMemory): DotAll | null {
  const m = kernelModule()
  if (!m || !WASM) return null
  return new WASM.Instance(m, { env: { mem: memory } }).exports.dotAll as DotAll
}
