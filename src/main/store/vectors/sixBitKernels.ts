/**
 * The 6-bit planes' kernels (sixBit.ts, int8Scan.ts; docs/internals/performance.md, "stop 35"), hand-assembled like
 * the others (dotKernel.ts builds their modules): the scan over the 6-bit plane (dot6All) and the packing of int8
 * codes into both planes (pack6).
 */
import {
  I32,
  V128,
  uleb,
  vec,
  get,
  set,
  i32,
  add32,
  shl32,
  geU32,
  simd,
  v128load,
  block,
  loop,
  end,
  br,
  brIf,
  i32x4splat,
  i32x4lane,
  dotI16,
  addI32x4,
  i32store,
  touchRow,
  zero4,
  mul32,
  v128store,
  andV,
  step,
} from './wasmAsm'

const [DATA, N, DIM, Q, OUT] = [0, 1, 2, 3, 4]

// --- the 6-bit first pass (sixBit.ts): exact integer dot products of int16 query codes with packed 6-bit values ---
//
//   (func (export "dot6All") (param $data i32) (param $n i32) (param $width i32) (param $q i32) (param $out i32)
//     rows are 3W/4 bytes (W = width, a multiple of 64): byte j's low 6 bits hold value j (j < 3W/4), and value
//     3W/4 + j (j < W/4) is spread over the top 2 bits of bytes j, j + W/4, j + W/2 (bits 0–1, 2–3, 4–5)
//     for o in 0..3W/4 step 64: load(p + o)   ;; touch the row's cache lines first (touchRow), so their misses go out together
//     a = b = c = d = i32x4(0); qp = q
//     for j in 0..W/4 step 16:   ;; one forward pass a row (a pass over the first 3W/4 bytes and then a second
//                                ;; one back at the row's start streamed ~30 % slower from memory: the prefetcher)
//       x0, x1, x2 = load(p + j), load(p + j + W/4), load(p + j + W/2)
//       dims j, j + W/4, j + W/2: x & 63;  dim 3W/4 + j: (x0 >> 6) | (x1 >> 6) << 2 | (x2 >> 6) << 4
//       each 16 values: a += dot_i16x8_s(extend_low_u(x), load(q + 2·dim)), b += the same of the high 8
//     out[r] = sum of the lanes of (a + b) + (c + d)   ;; int32: exact (|sum| ≤ 63 · 32767 · W < 2³¹ for the query codes used)
// Only uniform shifts (one count for all 16 lanes): no per-lane variable shift, which WebAssembly SIMD lacks.
const extLowU = simd(0x89)
const extHighU = simd(0x8a)
const orV = simd(0x50)
const splat8 = simd(0x0f)
// params 0..4: data n width q out · i32 5..11: r p qp i quarter q1 q2 · i32 12, 13: q3, the row's last 4 bytes · v128 14..18:
// a b c d mask · v128 19..21: the top-2 masks · v128 22..24: the three loads · v128 25: the values dotted
const [, , WIDTH, , , R6, P6, QP6, I6, QU6, Q16, Q26, Q36, RB6, A6, B6, C6, D6, M6, T6] = Array.from({ length: 20 }, (_, i) => i)
const X6 = T6 + 3
const tee = (i: number) => [0x22, ...uleb(i)]
// x (on the stack) against the query codes at qp (+ the local `qo`): low 8 into sum a, high 8 into sum b
const dots6 = (a: number, b: number, qo: number | null) => {
  const at = qo === null ? get(QP6) : [...get(QP6), ...get(qo), ...add32]
  return [
    ...tee(X6 + 3), ...extLowU, ...at, ...v128load(0), ...dotI16, ...get(a), ...addI32x4, ...set(a),
    ...get(X6 + 3), ...extHighU, ...at, ...v128load(16), ...dotI16, ...get(b), ...addI32x4, ...set(b),
  ] // prettier-ignore
}
// the top 2 bits of each byte moved to bits 2k, 2k+1 of the byte: a 16-bit shift (one instruction; x64 has no
// 8-bit one) by 6 − 2k, then the byte mask 0x03 << 2k clears what came across from the neighbouring byte
const shrU16 = (k: number) => [...i32(k), ...simd(0x8d)]
const top2 = (k: number) => [...get(X6 + k), ...shrU16(6 - 2 * k), ...get(T6 + k), ...andV]
const low6 = (k: number) => [...get(X6 + k), ...get(M6), ...andV]
const shrU32 = [0x76]
// One forward pass a row: bytes j, j + W/4, j + W/2 (16 each) give dims j, j + W/4, j + W/2 and, from their top
// bits, dim 3W/4 + j.
const BODY6 = [
  ...i32(63), ...splat8, ...set(M6),
  ...[0, 1, 2].flatMap((k) => [...i32(3 << (2 * k)), ...splat8, ...set(T6 + k)]),
  ...get(WIDTH), ...i32(2), ...shrU32, ...set(QU6),
  ...get(QU6), ...i32(1), ...shl32, ...set(Q16), // query bytes: dim j + W/4 is 2·(W/4) bytes after dim j
  ...get(Q16), ...get(Q16), ...add32, ...set(Q26),
  ...get(Q26), ...get(Q16), ...add32, ...set(Q36),
  ...get(QU6), ...get(Q16), ...add32, ...i32(-4), ...add32, ...set(RB6), // a row's last 4 bytes: 3W/4 − 4
  ...get(DATA), ...set(P6),
  ...i32(0), ...set(R6),
  ...block, ...loop, // rows
  ...get(R6), ...get(N), ...geU32, ...brIf(1),
  ...touchRow(P6, I6, RB6), // 1M × 768 on 2 cores, both kernels in one process: 39.6 ms against 47.4
  ...zero4(A6), ...zero4(B6), ...zero4(C6), ...zero4(D6),
  ...get(Q), ...set(QP6),
  ...i32(0), ...set(I6),
  ...block, ...loop, // 16 bytes of each third: 64 dims
  ...get(I6), ...get(QU6), ...geU32, ...brIf(1),
  ...get(P6), ...v128load(0), ...set(X6),
  ...get(P6), ...get(QU6), ...add32, ...v128load(0), ...set(X6 + 1),
  ...get(P6), ...get(QU6), ...get(QU6), ...add32, ...add32, ...v128load(0), ...set(X6 + 2),
  ...top2(0), ...top2(1), ...orV, ...top2(2), ...orV, ...dots6(C6, D6, Q36),
  ...low6(0), ...dots6(A6, B6, null), ...low6(1), ...dots6(C6, D6, Q16), ...low6(2), ...dots6(A6, B6, Q26),
  ...step(P6, 16), ...step(QP6, 32), ...step(I6, 16),
  ...br(0), ...end, ...end,
  ...get(P6), ...get(QU6), ...get(QU6), ...add32, ...add32, ...set(P6), // the next row (3W/4 from its start)
  ...get(A6), ...get(B6), ...addI32x4, ...get(C6), ...get(D6), ...addI32x4, ...addI32x4, ...set(A6),
  ...get(OUT), ...get(R6), ...i32(2), ...shl32, ...add32,
  ...get(A6), ...i32x4lane(0), ...get(A6), ...i32x4lane(1), ...add32,
  ...get(A6), ...i32x4lane(2), ...get(A6), ...i32x4lane(3), ...add32,
  ...add32, ...i32store(0),
  ...step(R6, 1),
  ...br(0), ...end, ...end,
  ...end,
] // prettier-ignore

export const FUNC6 = [
  ...vec([
    [...uleb(9), I32],
    [...uleb(12), V128],
  ]),
  ...BODY6,
]

// --- the planes' packing (sixBit.ts packRow, a block of rows on a load): int8 codes → the 6-bit and 2-bit planes ---
//
//   (func (export "pack6") (param $codes i32) (param $n i32) (param $width i32) (param $hi i32) (param $lo i32)
//     rows of W int8 codes (W a multiple of 64) → 3W/4 bytes at hi and W/4 bytes at lo, the layout of sixBit.ts:
//     u = c ^ 0x80 (c + 128); hi = u >> 2 by a 16-bit shift masked to 0x3f a byte; dim 3W/4 + j's bits go to the
//     top of bytes j, j + W/4, j + W/2 as (v << 6 − 2k) & 0xc0; lo = c & 3, four to a byte through 32-bit lanes
//     (x | x >> 6 | x >> 12 | x >> 18) narrowed to bytes.
const xorV = simd(0x51)
const shl16 = (k: number) => [...i32(k), ...simd(0x8b)]
const shrU32x4 = (k: number) => [...i32(k), ...simd(0xad)]
const narrow32 = simd(0x86)
const narrow16 = simd(0x66)
// params 0..4: codes n width hi lo · i32 5..10: r p h l j quarter · v128 11..20: v y0 y1 y2 y3 and the splats 3f c0 03 80 ff
const [, , , PH, PL, RP, PP, HP, LP, JP, QP4, VP, Y0P, , , , M3F, MC0, M03, X80, MFF] = Array.from({ length: 21 }, (_, i) => i)
const hiOfLoad = (at: number[]) => [...at, ...v128load(0), ...get(X80), ...xorV, ...shrU16(2), ...get(M3F), ...andV]
const third = (k: number) => [
  ...get(HP), ...(k ? [...get(QP4), ...i32(k), ...mul32, ...add32] : []), ...get(JP), ...add32,
  ...hiOfLoad([...get(PP), ...(k ? [...get(QP4), ...i32(k), ...mul32, ...add32] : []), ...get(JP), ...add32]),
  ...get(VP), ...shl16(6 - 2 * k), ...get(MC0), ...andV, ...orV, ...v128store(0),
] // prettier-ignore
const lo4 = (t: number) => [
  ...get(PP), ...get(JP), ...i32(2), ...shl32, ...add32, ...v128load(16 * t), ...get(M03), ...andV, ...set(Y0P + t),
  ...get(Y0P + t), ...get(Y0P + t), ...shrU32x4(6), ...orV, ...get(Y0P + t), ...shrU32x4(12), ...orV, ...get(Y0P + t), ...shrU32x4(18), ...orV,
  ...get(MFF), ...andV, ...set(Y0P + t),
] // prettier-ignore
const BODYP = [
  ...[[0x3f, M3F], [0xc0, MC0], [3, M03], [0x80, X80]].flatMap(([c, l]) => [...i32(c), ...splat8, ...set(l)]),
  ...i32(0xff), ...i32x4splat, ...set(MFF),
  ...get(DIM), ...i32(2), ...shrU32, ...set(QP4),
  ...get(DATA), ...set(PP), ...get(PH), ...set(HP), ...get(PL), ...set(LP),
  ...i32(0), ...set(RP),
  ...block, ...loop, // rows
  ...get(RP), ...get(N), ...geU32, ...brIf(1),
  ...i32(0), ...set(JP),
  ...block, ...loop, // 16 bytes of each third of the 6-bit row, and 16 bytes of the 2-bit row (64 codes)
  ...get(JP), ...get(QP4), ...geU32, ...brIf(1),
  ...hiOfLoad([...get(PP), ...get(QP4), ...i32(3), ...mul32, ...add32, ...get(JP), ...add32]), ...set(VP),
  ...third(0), ...third(1), ...third(2),
  ...lo4(0), ...lo4(1), ...lo4(2), ...lo4(3),
  ...get(LP), ...get(JP), ...add32,
  ...get(Y0P), ...get(Y0P + 1), ...narrow32, ...get(Y0P + 2), ...get(Y0P + 3), ...narrow32, ...narrow16, ...v128store(0),
  ...step(JP, 16),
  ...br(0), ...end, ...end,
  ...get(PP), ...get(DIM), ...add32, ...set(PP),
  ...get(HP), ...get(QP4), ...i32(3), ...mul32, ...add32, ...set(HP),
  ...get(LP), ...get(QP4), ...add32, ...set(LP),
  ...step(RP, 1),
  ...br(0), ...end, ...end,
  ...end,
] // prettier-ignore

export const FUNCP = [
  ...vec([
    [...uleb(6), I32],
    [...uleb(10), V128],
  ]),
  ...BODYP,
]
