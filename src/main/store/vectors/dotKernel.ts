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
 *       for o in 0..4·dim step 64: load(p + o)         ;; touch the row's cache lines first (touchRow, wasmAsm.ts)
 *       a = b = f64x2(0, 0); qp = q
 *       for i in 0..dim & ~3 step 4:
 *         a += promote(load64_zero(p))     * v128.load(qp)        ;; elements i, i+1   → s0, s1
 *         b += promote(load64_zero(p + 8)) * v128.load(qp + 16)   ;; elements i+2, i+3 → s2, s3
 *       s0 = a[0]; for the rest: s0 += f64(f32.load p) * f64.load qp
 *       out[r] = (s0 + a[1]) + (b[0] + b[1])
 */

import { FUNC6, FUNCP } from './sixBitKernels'
import {
  I32,
  F64,
  V128,
  uleb,
  sleb,
  name,
  vec,
  section,
  get,
  set,
  i32,
  f64zero,
  add32,
  and32,
  shl32,
  geU32,
  f64add,
  f64mul,
  f32load,
  f64load,
  f64store,
  f64promote,
  simd,
  v128load,
  load64zero,
  splatF64,
  lane,
  addF64x2,
  mulF64x2,
  promoteLow,
  block,
  loop,
  end,
  br,
  brIf,
  mul32,
  v128store,
  andV,
  step,
  touchRow,
} from './wasmAsm'

// params 0..4: data n dim q out · locals: 5 r, 6 p, 7 qp, 8 i, 9 dim4, 10 the row's last 4 bytes (i32) · 11 a, 12 b
// (v128) · 13 s0 (f64)
const [DATA, N, DIM, Q, OUT, R, P, QP, I, DIM4, LAST, A, B, S0] = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13]

// touchRow's bound for a row of dim float32s: its last 4 bytes at 4·dim − 4 (into `local`; the float kernels below)
const lastOfRow = (local: number) => [...get(DIM), ...i32(2), ...shl32, ...i32(-4), ...add32, ...set(local)]

const BODY = [
  ...get(DIM), ...i32(-4), ...and32, ...set(DIM4),
  ...lastOfRow(LAST),
  ...get(DATA), ...set(P),
  ...i32(0), ...set(R),
  ...block, ...loop, // rows
  ...get(R), ...get(N), ...geU32, ...brIf(1),
  ...touchRow(P, I, LAST), // 100k × 768 on 2 cores, both kernels in one process: 21.5 ms against 25.8
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
    [...uleb(6), I32],
    [...uleb(2), V128],
    [...uleb(1), F64],
  ]),
  ...BODY,
]

// --- two query vectors per pass (the map's PCA, map/pca.ts): each row is read once for both ---
//
//   (func (export "dot2All") (param $data i32) (param $n i32) (param $dim i32) (param $q i32) (param $out i32)
//     the second query follows the first (q + 8·dim); out[2r] = row r · q0, out[2r+1] = row r · q1, each summed
//     exactly as dotAll sums it. Four independent accumulators instead of two: dotAll waits on its two
//     additions' latency, this does twice the work in the same steps.
//     Each row's cache lines are touched first, as dotAll's (touchRow).
const [, , , , , R2, P2, QP2, QQ2, I2, DIM42, LAST2, A0, B0, A1, B1, X01, X23, S20, S21, X2] = Array.from({ length: 21 }, (_, i) => i)
const acc2 = (local: number, x: number, qp: number, off: number) => [
  ...get(local),
  ...get(x),
  ...get(qp),
  ...v128load(off),
  ...mulF64x2,
  ...addF64x2,
  ...set(local),
]
const rest2 = (s: number, qp: number) => [...get(s), ...get(X2), ...get(qp), ...f64load(0), ...f64mul, ...f64add, ...set(s)]
const store2 = (s: number, a: number, b: number, off: number) => [
  ...get(OUT), ...get(R2), ...i32(4), ...shl32, ...add32,
  ...get(s), ...get(a), ...lane(1), ...f64add, ...get(b), ...lane(0), ...get(b), ...lane(1), ...f64add, ...f64add, ...f64store(off),
] // prettier-ignore

const BODY2 = [
  ...get(DIM), ...i32(-4), ...and32, ...set(DIM42),
  ...lastOfRow(LAST2),
  ...get(DATA), ...set(P2),
  ...i32(0), ...set(R2),
  ...block, ...loop, // rows
  ...get(R2), ...get(N), ...geU32, ...brIf(1),
  ...touchRow(P2, I2, LAST2),
  ...f64zero, ...splatF64, ...set(A0), ...f64zero, ...splatF64, ...set(B0),
  ...f64zero, ...splatF64, ...set(A1), ...f64zero, ...splatF64, ...set(B1),
  ...get(Q), ...set(QP2),
  ...get(Q), ...get(DIM), ...i32(3), ...shl32, ...add32, ...set(QQ2),
  ...i32(0), ...set(I2),
  ...block, ...loop, // four elements at a time, against both queries
  ...get(I2), ...get(DIM42), ...geU32, ...brIf(1),
  ...get(P2), ...load64zero(0), ...promoteLow, ...set(X01),
  ...get(P2), ...load64zero(8), ...promoteLow, ...set(X23),
  ...acc2(A0, X01, QP2, 0), ...acc2(B0, X23, QP2, 16), ...acc2(A1, X01, QQ2, 0), ...acc2(B1, X23, QQ2, 16),
  ...step(P2, 16), ...step(QP2, 32), ...step(QQ2, 32), ...step(I2, 4),
  ...br(0), ...end, ...end,
  ...get(A0), ...lane(0), ...set(S20),
  ...get(A1), ...lane(0), ...set(S21),
  ...block, ...loop, // the remainder, into each s0
  ...get(I2), ...get(DIM), ...geU32, ...brIf(1),
  ...get(P2), ...f32load(0), ...f64promote, ...set(X2),
  ...rest2(S20, QP2), ...rest2(S21, QQ2),
  ...step(P2, 4), ...step(QP2, 8), ...step(QQ2, 8), ...step(I2, 1),
  ...br(0), ...end, ...end,
  ...store2(S20, A0, B0, 0), ...store2(S21, A1, B1, 8),
  ...step(R2, 1),
  ...br(0), ...end, ...end,
  ...end,
] // prettier-ignore

const FUNC2 = [
  ...vec([
    [...uleb(7), I32],
    [...uleb(6), V128],
    [...uleb(3), F64],
  ]),
  ...BODY2,
]

// --- the map's PCA pass over every row (map/pca.ts): both axes, the squared norm and the column sums at once ---
//
//   (func (export "pcaRowsAll") (param $data i32) (param $n i32) (param $dim i32) (param $q i32) (param $out i32)
//     q holds three float64 vectors of dim: axis c0, axis c1, then the column sums (added to in place);
//     out[3r] = row r · c0, out[3r+1] = row r · c1, out[3r+2] = ‖row r‖², each summed as dotAll sums.
//     Each row's cache lines are touched first, as dotAll's (touchRow).
const [, , , , , R3, P3, QA3, QB3, SP3, I3, D43, LAST3, A30, B30, A31, B31, SA3, SB3, X301, X323, S30, S31, S32, X3] = Array.from({ length: 25 }, (_, i) => i)
const sq3 = (local: number, x: number) => [...get(local), ...get(x), ...get(x), ...mulF64x2, ...addF64x2, ...set(local)]
const sum3 = (x: number, off: number) => [...get(SP3), ...get(SP3), ...v128load(off), ...get(x), ...addF64x2, ...v128store(off)]
const rest3 = (s: number, qp: number) => [...get(s), ...get(X3), ...get(qp), ...f64load(0), ...f64mul, ...f64add, ...set(s)]
const fold3 = (s: number, a: number, b: number, off: number) => [
  ...get(OUT), ...get(R3), ...i32(24), ...mul32, ...add32,
  ...get(s), ...get(a), ...lane(1), ...f64add, ...get(b), ...lane(0), ...get(b), ...lane(1), ...f64add, ...f64add, ...f64store(off),
] // prettier-ignore

const BODY3 = [
  ...get(DIM), ...i32(-4), ...and32, ...set(D43),
  ...lastOfRow(LAST3),
  ...get(DATA), ...set(P3),
  ...i32(0), ...set(R3),
  ...block, ...loop, // rows
  ...get(R3), ...get(N), ...geU32, ...brIf(1),
  ...touchRow(P3, I3, LAST3),
  ...[A30, B30, A31, B31, SA3, SB3].flatMap((l) => [...f64zero, ...splatF64, ...set(l)]),
  ...get(Q), ...set(QA3),
  ...get(Q), ...get(DIM), ...i32(3), ...shl32, ...add32, ...set(QB3),
  ...get(QB3), ...get(DIM), ...i32(3), ...shl32, ...add32, ...set(SP3),
  ...i32(0), ...set(I3),
  ...block, ...loop, // four elements at a time
  ...get(I3), ...get(D43), ...geU32, ...brIf(1),
  ...get(P3), ...load64zero(0), ...promoteLow, ...set(X301),
  ...get(P3), ...load64zero(8), ...promoteLow, ...set(X323),
  ...acc2(A30, X301, QA3, 0), ...acc2(B30, X323, QA3, 16), ...acc2(A31, X301, QB3, 0), ...acc2(B31, X323, QB3, 16),
  ...sq3(SA3, X301), ...sq3(SB3, X323),
  ...sum3(X301, 0), ...sum3(X323, 16),
  ...step(P3, 16), ...step(QA3, 32), ...step(QB3, 32), ...step(SP3, 32), ...step(I3, 4),
  ...br(0), ...end, ...end,
  ...get(A30), ...lane(0), ...set(S30),
  ...get(A31), ...lane(0), ...set(S31),
  ...get(SA3), ...lane(0), ...set(S32),
  ...block, ...loop, // the remainder
  ...get(I3), ...get(DIM), ...geU32, ...brIf(1),
  ...get(P3), ...f32load(0), ...f64promote, ...set(X3),
  ...rest3(S30, QA3), ...rest3(S31, QB3),
  ...get(S32), ...get(X3), ...get(X3), ...f64mul, ...f64add, ...set(S32),
  ...get(SP3), ...get(SP3), ...f64load(0), ...get(X3), ...f64add, ...f64store(0),
  ...step(P3, 4), ...step(QA3, 8), ...step(QB3, 8), ...step(SP3, 8), ...step(I3, 1),
  ...br(0), ...end, ...end,
  ...fold3(S30, A30, B30, 0), ...fold3(S31, A31, B31, 8), ...fold3(S32, SA3, SB3, 16),
  ...step(R3, 1),
  ...br(0), ...end, ...end,
  ...end,
] // prettier-ignore

const FUNC3 = [
  ...vec([
    [...uleb(8), I32],
    [...uleb(8), V128],
    [...uleb(4), F64],
  ]),
  ...BODY3,
]

// --- the quantiser (int8Scan.ts's setRow, on a load): float32 rows in place → unit rows, int8 codes, per-row numbers ---
//
//   (func (export "quantI8") (param $data i32) (param $n i32) (param $dim i32) (param $codes i32) (param $out i32)
//     for r in 0..n:                       ;; row r: dim float32 at data + r·dim·4, codes at codes + r·stride, out at out + r·32
//       ss = Σ x²                          ;; four float64 sums, element i in sum i mod 4, the rest in sum 0, (s0 + s1) + (s2 + s3)
//       inv = sqrt(ss) > 0 ? 1 / sqrt(ss) : 0
//       x ← f32(x · inv) in place          ;; the unit row (VectorIndex.putFrom's numbers)
//       s = f32(max|x| / 127)
//       c = s > 0 ? clamp(floor(x / s + 0.5), ±127) : 0   ;; Math.round(x / s), ties up (why it is exact: below)
//       e2 = Σ (x − s·c)², h2 = Σ (s·c)²   ;; summed like ss
//       L = ((c + 128) mod 4) − 1.5;  X = Σ (x − s·c)·L, Y = Σ s·c·L, Z = Σ L²   ;; summed like ss
//       out = [ss, s, e2, h2, X, Y, Z] (float64)
// Every operation is IEEE float64 (or an exact conversion) in the order the JS reference (Int8Index.setRow in
// int8Scan.ts) uses, so the numbers are the same bit for bit whichever path made them.
// The rounding: floor(y + 0.5) with y = fl(x / s) is Math.round(y) although y + 0.5 is rounded too.
// Only half-integers matter (where y + 0.5 is an integer). x and s are float32 and s is normal (a unit
// row's largest magnitude is ≥ 1/√dim), so the exact quotient is a half-integer (then y is exact, and
// y + 0.5) or at least 2⁻²⁶ away from every one, while |y| < 128 keeps y, and y + 0.5, within 2⁻⁴⁵ of
// the exact numbers: no rounding crosses a boundary. Three instructions a pair instead of six; the JS
// reference keeps Math.round, and quantize.test.ts holds rows of exact ties.
// The largest magnitude and the clamp use pmax/pmin (one instruction; f32x4.max and friends spend ~8 on NaN
// and ±0): they differ only for NaN, which only a non-finite row holds (rejected by its sum of squares) or a
// zero scale makes (masked to 0), and on −0 against +0, which |x| and floor(y + 0.5) never are (2.7× faster).
const f32store = (off: number) => [0x38, 2, ...uleb(off)]
const f64const = (x: number) => [0x44, ...new Uint8Array(new Float64Array([x]).buffer)]
const i64const = (n: number) => [0x42, ...sleb(n)]
const i32store8 = [0x3a, 0, 0]
const f32demote = [0xb6]
const f32abs = [0x8b]
const f32max = [0x97]
const f64sqrt = [0x9f]
const f64sub = [0xa1]
const f64div = [0xa3]
const f64floor = [0x9c]
const f64min = [0xa4]
const f64max = [0xa5]
const f64gt = [0x64]
const f64ge = [0x66]
const select = [0x1b]
const truncSat32 = [0xfc, 0x02]
const splatI64 = simd(0x12)
const splatF32 = simd(0x13)
const laneF32 = (l: number) => simd(0x1f, l)
const absF32x4 = simd(0xe0)
// pmax(a, b) = a < b ? b : a, pmin(a, b) = b < a ? b : a: one instruction each (min/max handle NaN and ±0 in ~8)
const pmaxF32x4 = simd(0xeb)
const subF64x2 = simd(0xf1)
const divF64x2 = simd(0xf3)
const pminF64x2 = simd(0xf6)
const pmaxF64x2 = simd(0xf7)
const floorF64x2 = simd(0x75)
const demoteZero = simd(0x5e)
const store64lane = (off: number) => simd(0x5b, 0, ...uleb(off), 0)
const store32lane = (off: number) => simd(0x5a, 0, ...uleb(off), 0)
// the low byte of each float64 lane of two operands (bytes 0, 8 of the first, 16, 24 of the second)
const lowBytes4 = simd(0x0d, 0, 8, 16, 24, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)

// params 0..4: data n dim codes out
// i32 locals 5..11: r p cp i dim4 row cstart · v128 12..22: A B M V X R XH EA EB HA HB · v128 23..25: INV2 S2 MASK
// f64 26..31: s0 inv s y f e0 · f64 32: h0 · f32 33: mx · f64 34: x (tail) · f64 35: ss · v128 36..38: the splats 0.5, 127, −127
const [, , , CODES, , QR, QPP, QCP, QI, QD4, ROW, CST] = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11]
const [QA, QB, QM, QV, QX, QR2, QXH, QEA, QEB, QHA, QHB, INV2, S2, MASK] = [12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25]
const [QS0, QINV, QS, QY, QF, QE0, QH0, QMX, QXX, QSS] = [26, 27, 28, 29, 30, 31, 32, 33, 34, 35]
const [HALF2, P127, N127, MAGIC] = [36, 37, 38, 39]
// the 6-bit approximation's sums (int8Scan.ts, sixFrom): v128 40..46 X Y Z (A, B each) and L, 47..50 the splats
// 128, 0.25, 4, 1.5 · f64 51..54: x0 y0 z0 l (the tail)
const [QXA, QXB, QYA, QYB, QZA, QZB, QL2, C128, QUART, FOUR2, ONE52, QX0, QY0, QZ0, QLS] = Array.from({ length: 15 }, (_, i) => 40 + i)
// L = lo − 1.5 of the code c on the stack: lo = (c + 128) − 4·floor((c + 128) / 4) (exact in float64)
const lowL2 = [
  ...get(C128),
  ...addF64x2,
  ...set(QL2),
  ...get(QL2),
  ...get(QL2),
  ...get(QUART),
  ...mulF64x2,
  ...floorF64x2,
  ...get(FOUR2),
  ...mulF64x2,
  ...subF64x2,
  ...get(ONE52),
  ...subF64x2,
  ...set(QL2),
]
const acc2Q = (acc: number, a: number, b: number) => [...get(acc), ...get(a), ...get(b), ...mulF64x2, ...addF64x2, ...set(acc)]
const forI = (limit: number, body: number[]) => [...block, ...loop, ...get(QI), ...get(limit), ...geU32, ...brIf(1), ...body, ...br(0), ...end, ...end]
const sq = (acc: number, v: number) => [...get(acc), ...get(v), ...get(v), ...mulF64x2, ...addF64x2, ...set(acc)]
// R = mask & clamp(floor(X / s + 0.5), ±127): Math.round(X / s) (ties up), see the note above BODYQ
const roundQ = [
  ...get(QX), ...get(S2), ...divF64x2, ...get(HALF2), ...addF64x2, ...floorF64x2,
  ...get(P127), ...pminF64x2, ...get(N127), ...pmaxF64x2,
  ...get(MASK), ...andV, ...set(QR2),
] // prettier-ignore
// one pair of elements at p + off: errors into E, approximations into H, and their codes left on the stack as
// c + 1.5·2⁵² (float64x2): an integer |c| ≤ 127 added to it is exact and leaves c's two's complement in the low
// mantissa bits, so the low byte of each lane is the int8 code (no float → int conversion, no narrowing)
const pairQ = (off: number, e: number, h: number, k: number) => [
  ...get(QPP), ...load64zero(off), ...promoteLow, ...set(QX),
  ...roundQ,
  ...get(QR2), ...get(S2), ...mulF64x2, ...set(QXH),
  ...get(QX), ...get(QXH), ...subF64x2, ...set(QV), ...sq(e, QV),
  ...sq(h, QXH),
  ...get(QR2), ...lowL2, ...acc2Q(QXA + k, QV, QL2), ...acc2Q(QYA + k, QXH, QL2), ...acc2Q(QZA + k, QL2, QL2),
  ...get(QR2), ...get(MAGIC), ...addF64x2,
] // prettier-ignore
const unitPair = (off: number) => [
  ...get(QPP), ...get(QPP), ...load64zero(off), ...promoteLow, ...get(INV2), ...mulF64x2, ...demoteZero, ...set(QV),
  ...get(QV), ...store64lane(off),
  ...get(QM), ...get(QV), ...absF32x4, ...pmaxF32x4, ...set(QM),
] // prettier-ignore
const lanesSum = (s0: number, a: number, b: number) => [
  ...get(s0),
  ...get(a),
  ...lane(1),
  ...f64add,
  ...get(b),
  ...lane(0),
  ...get(b),
  ...lane(1),
  ...f64add,
  ...f64add,
]
const zero2 = (local: number) => [...f64zero, ...splatF64, ...set(local)]

const BODYQ = [
  ...f64const(0.5), ...splatF64, ...set(HALF2),
  ...f64const(127), ...splatF64, ...set(P127),
  ...f64const(-127), ...splatF64, ...set(N127),
  ...f64const(2 ** 52 + 2 ** 51), ...splatF64, ...set(MAGIC),
  ...[128, 0.25, 4, 1.5].flatMap((c, i) => [...f64const(c), ...splatF64, ...set(C128 + i)]),
  ...get(DIM), ...i32(-4), ...and32, ...set(QD4),
  ...get(DATA), ...set(ROW),
  ...get(CODES), ...set(CST),
  ...i32(0), ...set(QR),
  ...block, ...loop, // rows
  ...get(QR), ...get(N), ...geU32, ...brIf(1),
  // 1. ss = Σ x²
  ...get(ROW), ...set(QPP), ...zero2(QA), ...zero2(QB), ...i32(0), ...set(QI),
  ...forI(QD4, [
    ...get(QPP), ...load64zero(0), ...promoteLow, ...set(QV), ...sq(QA, QV),
    ...get(QPP), ...load64zero(8), ...promoteLow, ...set(QV), ...sq(QB, QV),
    ...step(QPP, 16), ...step(QI, 4),
  ]),
  ...get(QA), ...lane(0), ...set(QS0),
  ...forI(DIM, [
    ...get(QPP), ...f32load(0), ...f64promote, ...set(QXX),
    ...get(QS0), ...get(QXX), ...get(QXX), ...f64mul, ...f64add, ...set(QS0),
    ...step(QPP, 4), ...step(QI, 1),
  ]),
  ...lanesSum(QS0, QA, QB), ...set(QSS),
  ...get(OUT), ...get(QSS), ...f64store(0),
  // 2. the unit row in place, and its largest magnitude
  ...f64const(1), ...get(QSS), ...f64sqrt, ...f64div, ...f64zero, ...get(QSS), ...f64sqrt, ...f64zero, ...f64gt, ...select, ...set(QINV),
  ...get(QINV), ...splatF64, ...set(INV2),
  ...f64zero, ...f32demote, ...splatF32, ...set(QM),
  ...get(ROW), ...set(QPP), ...i32(0), ...set(QI),
  ...forI(QD4, [...unitPair(0), ...unitPair(8), ...step(QPP, 16), ...step(QI, 4)]),
  ...get(QM), ...laneF32(0), ...get(QM), ...laneF32(1), ...f32max, ...get(QM), ...laneF32(2), ...get(QM), ...laneF32(3), ...f32max, ...f32max, ...set(QMX),
  ...forI(DIM, [
    ...get(QPP), ...get(QPP), ...f32load(0), ...f64promote, ...get(QINV), ...f64mul, ...f32demote, ...f32store(0),
    ...get(QMX), ...get(QPP), ...f32load(0), ...f32abs, ...f32max, ...set(QMX),
    ...step(QPP, 4), ...step(QI, 1),
  ]),
  ...get(QMX), ...f64promote, ...f64const(127), ...f64div, ...f32demote, ...f64promote, ...set(QS),
  ...get(OUT), ...get(QS), ...f64store(8),
  // 3. codes and the error sums
  ...get(QS), ...splatF64, ...set(S2),
  ...i64const(-1), ...i64const(0), ...get(QS), ...f64zero, ...f64gt, ...select, ...splatI64, ...set(MASK),
  ...zero2(QEA), ...zero2(QEB), ...zero2(QHA), ...zero2(QHB),
  ...[QXA, QXB, QYA, QYB, QZA, QZB].flatMap(zero2),
  ...get(ROW), ...set(QPP), ...get(CST), ...set(QCP), ...i32(0), ...set(QI),
  ...forI(QD4, [
    ...get(QCP),
    ...pairQ(0, QEA, QHA, 0), ...pairQ(8, QEB, QHB, 1), ...lowBytes4,
    ...store32lane(0),
    ...step(QPP, 16), ...step(QCP, 4), ...step(QI, 4),
  ]),
  ...get(QEA), ...lane(0), ...set(QE0),
  ...get(QHA), ...lane(0), ...set(QH0),
  ...[QX0, QY0, QZ0].flatMap((l, i) => [...get(QXA + 2 * i), ...lane(0), ...set(l)]),
  ...forI(DIM, [
    ...get(QPP), ...f32load(0), ...f64promote, ...set(QXX),
    ...get(QXX), ...get(QS), ...f64div, ...set(QY),
    ...get(QY), ...f64floor, ...set(QF),
    ...get(QF), ...f64const(1), ...f64zero, ...get(QY), ...get(QF), ...f64sub, ...f64const(0.5), ...f64ge, ...select, ...f64add,
    ...f64const(127), ...f64min, ...f64const(-127), ...f64max,
    ...f64zero, ...get(QS), ...f64zero, ...f64gt, ...select, ...set(QF),
    ...get(QCP), ...get(QF), ...truncSat32, ...i32store8,
    ...get(QS), ...get(QF), ...f64mul, ...set(QY), // s·c
    ...get(QE0), ...get(QXX), ...get(QY), ...f64sub, ...get(QXX), ...get(QY), ...f64sub, ...f64mul, ...f64add, ...set(QE0),
    ...get(QH0), ...get(QY), ...get(QY), ...f64mul, ...f64add, ...set(QH0),
    ...get(QF), ...f64const(128), ...f64add, ...set(QLS),
    ...get(QLS), ...get(QLS), ...f64const(0.25), ...f64mul, ...f64floor, ...f64const(4), ...f64mul, ...f64sub, ...f64const(1.5), ...f64sub, ...set(QLS),
    ...get(QX0), ...get(QXX), ...get(QY), ...f64sub, ...get(QLS), ...f64mul, ...f64add, ...set(QX0),
    ...get(QY0), ...get(QY), ...get(QLS), ...f64mul, ...f64add, ...set(QY0),
    ...get(QZ0), ...get(QLS), ...get(QLS), ...f64mul, ...f64add, ...set(QZ0),
    ...step(QPP, 4), ...step(QCP, 1), ...step(QI, 1),
  ]),
  ...get(OUT), ...lanesSum(QE0, QEA, QEB), ...f64store(16),
  ...get(OUT), ...lanesSum(QH0, QHA, QHB), ...f64store(24),
  ...[QX0, QY0, QZ0].flatMap((l, i) => [...get(OUT), ...lanesSum(l, QXA + 2 * i, QXB + 2 * i), ...f64store(32 + 8 * i)]),
  // next row
  ...get(ROW), ...get(DIM), ...i32(4), ...mul32, ...add32, ...set(ROW),
  ...get(CST), ...get(DIM), ...i32(31), ...add32, ...i32(-32), ...and32, ...add32, ...set(CST),
  ...step(OUT, 56), ...step(QR, 1),
  ...br(0), ...end, ...end,
  ...end,
] // prettier-ignore

const FUNCQ = [
  ...vec([
    [...uleb(7), I32],
    [...uleb(14), V128],
    [...uleb(6), F64],
    [...uleb(1), F64],
    [...uleb(1), 0x7d],
    [...uleb(2), F64],
    [...uleb(4), V128],
    [...uleb(11), V128],
    [...uleb(4), F64],
  ]),
  ...BODYQ,
]

/** WebAssembly memories stop at 4 GiB (65,536 pages of 64 KiB). */
export const WASM_MAX_PAGES = 65536

/**
 * The kernels: f32 rows · f64 query (dotAll), the same against two queries (dot2All), the map PCA's pass over the
 * rows (pcaRowsAll), the quantiser (quantI8), packed 6-bit rows · int16 query (dot6All), the planes' packing (pack6).
 */
export type KernelName = 'dotAll' | 'dot2All' | 'pcaRowsAll' | 'quantI8' | 'dot6All' | 'pack6'

const FUNCS: Record<KernelName, number[]> = { dotAll: FUNC, dot2All: FUNC2, pcaRowsAll: FUNC3, quantI8: FUNCQ, dot6All: FUNC6, pack6: FUNCP }

/**
 * A module exporting one kernel `(data, n, dim|stride, q, out) → ()` over the
 * imported env.mem. The shared variant imports a shared memory (limits flag 3:
 * shared, with a maximum), which the scan pool's helper threads (scanPool.ts)
 * instantiate the same module over.
 */
const moduleBytes = (kernel: KernelName, shared: boolean) => {
  const func = FUNCS[kernel]
  return Uint8Array.from([
    0x00, 0x61, 0x73, 0x6d, 1, 0, 0, 0,
    ...section(1, vec([[0x60, ...vec([[I32], [I32], [I32], [I32], [I32]]), 0]])), // type: (i32 ×5) → ()
    // import memory: min 1 page (shared: and at most 4 GiB)
    ...section(2, vec([[...name('env'), ...name('mem'), 0x02, ...(shared ? [0x03, 1, ...uleb(WASM_MAX_PAGES)] : [0x00, 1])]])),
    ...section(3, vec([[0]])),
    ...section(7, vec([[...name(kernel), 0x00, 0]])),
    ...section(10, vec([[...uleb(func.length), ...func]])),
  ])
} // prettier-ignore

/** The slice of the WebAssembly API used here (the node typings do not declare it: lib is ES2023 without DOM). */
export interface WasmMemory {
  readonly buffer: ArrayBuffer | SharedArrayBuffer
  grow(deltaPages: number): number
}
interface WasmApi {
  validate(bytes: Uint8Array): boolean
  Module: new (bytes: Uint8Array) => object
  Instance: new (module: object, imports: object) => { exports: Record<string, unknown> }
  Memory: new (desc: { initial: number; maximum?: number; shared?: boolean }) => WasmMemory
}
const WASM = (globalThis as { WebAssembly?: WasmApi }).WebAssembly

const compiled = new Map<string, object | null>()

/**
 * A kernel's compiled module (plain or shared-memory variant), or null where WebAssembly
 * SIMD (or, for the shared variant, shared memory) is unavailable.
 */
export function kernelModule(shared = false, kernel: KernelName = 'dotAll'): object | null {
  const key = `${kernel}:${shared}`
  if (!compiled.has(key)) {
    try {
      if (shared && typeof SharedArrayBuffer !== 'function') compiled.set(key, null)
      else {
        const bytes = moduleBytes(kernel, shared)
        compiled.set(key, WASM && WASM.validate(bytes) ? new WASM.Module(bytes) : null)
      }
    } catch {
      compiled.set(key, null)
    }
  }
  return compiled.get(key)!
}

export function dotKernelAvailable(): boolean {
  return kernelModule() !== null
}

/**
 * A WebAssembly memory of `pages` × 64 KiB (throws a RangeError when the address
 * space is short). Shared: its buffer is a SharedArrayBuffer other threads can
 * scan; it grows in place up to 4 GiB.
 */
export function wasmMemory(pages: number, shared = false): WasmMemory {
  if (!WASM) throw new RangeError('WebAssembly is not available')
  return shared ? new WASM.Memory({ initial: pages, maximum: WASM_MAX_PAGES, shared: true }) : new WASM.Memory({ initial: pages })
}

export type DotAll = (data: number, n: number, dim: number, q: number, out: number) => void

/** An instance of a kernel bound to `memory` (shared or not, as it was made), or null without SIMD. */
export function dotKernel(memory: WasmMemory, shared = false, kernel: KernelName = 'dotAll'): DotAll | null {
  const m = kernelModule(shared, kernel)
  if (!m || !WASM) return null
  return new WASM.Instance(m, { env: { mem: memory } }).exports[kernel] as DotAll
}
