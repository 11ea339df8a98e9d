/**
 * Where the map's rows live: n × dim float32, row-major, over shared memory, so the PCA worker, the UMAP
 * worker and its helper threads read them in place instead of each receiving a copy. Where WebAssembly SIMD
 * and shared memory are there, that is a shared WebAssembly memory: the PCA's pass over every row then runs
 * on the SIMD kernel over the rows where they are (docs/internals/performance.md, "The map").
 */
import { kernelModule, wasmMemory, type WasmMemory } from '../store/vectors/dotKernel'

export interface MapRows {
  /** the rows, `data[i·dim + j]` */
  data: Float32Array
  /** the shared WebAssembly memory `data` starts at offset 0 of (null: a SharedArrayBuffer or plain memory) */
  memory: WasmMemory | null
}

/** Zeroed rows for `n` × `dim` values: in a shared WebAssembly memory, else a SharedArrayBuffer, else plain memory. */
export function allocateRows(n: number, dim: number): MapRows {
  const bytes = 4 * n * dim
  if (kernelModule(true, 'pcaRowsAll'))
    try {
      const memory = wasmMemory(Math.max(1, Math.ceil(bytes / 65536)), true)
      return { data: new Float32Array(memory.buffer, 0, n * dim), memory }
    } catch {
      // No address space for a WebAssembly memory: a SharedArrayBuffer does as well, without the kernel.
    }
  const data = typeof SharedArrayBuffer === 'function' ? new Float32Array(new SharedArrayBuffer(bytes)) : new Float32Array(n * dim)
  return { data, memory: null }
}
