/**
 * The hardware floor for the dense bench: a tiny C scan (dot product per row, top-k kept
 * in a small sorted array) compiled at run time with the system compiler (`cc -O3
 * -march=native`), over the very same float32 matrix and queries. The C source is
 * written into .bench-cache/ on each run (no binary is committed); the matrix and the
 * queries are handed over as raw float32 files. The program times each query itself
 * (monotonic clock, load excluded) and prints the ms and the top-k row numbers.
 * Without a compiler the bench says "skipped: no cc".
 */
import { spawnSync } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { CACHE } from './util'

/** 16 float accumulators per row: gcc/clang vectorise this at -O3 without -ffast-math (the sum order is fixed, not reassociated). */
const C_SOURCE = String.raw`
#define _POSIX_C_SOURCE 199309L
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static float *readAll(const char *p, size_t n) {
  FILE *f = fopen(p, "rb");
  if (!f) { perror(p); exit(2); }
  float *a = aligned_alloc(64, ((n * sizeof(float)) + 63) / 64 * 64);
  if (fread(a, sizeof(float), n, f) != n) { fprintf(stderr, "short read %s\n", p); exit(2); }
  fclose(f);
  return a;
}

int main(int argc, char **argv) {
  if (argc < 7) { fprintf(stderr, "usage: matrix n dim queries nq k\n"); return 2; }
  size_t n = strtoul(argv[2], 0, 10), dim = strtoul(argv[3], 0, 10), nq = strtoul(argv[5], 0, 10), k = strtoul(argv[6], 0, 10);
  float *m = readAll(argv[1], n * dim);
  float *qs = readAll(argv[4], nq * dim);
  float *topS = malloc(k * sizeof(float));
  long *topR = malloc(k * sizeof(long));
  for (size_t qi = 0; qi < nq; qi++) {
    const float *q = qs + qi * dim;
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    size_t have = 0;
    for (size_t r = 0; r < n; r++) {
      const float *row = m + r * dim;
      float acc[16] = {0};
      size_t i = 0;
      for (; i + 16 <= dim; i += 16)
        for (int l = 0; l < 16; l++) acc[l] += row[i + l] * q[i + l];
      float s = 0;
      for (int l = 0; l < 16; l++) s += acc[l];
      for (; i < dim; i++) s += row[i] * q[i];
      if (have < k || s > topS[have - 1]) {
        size_t p = have < k ? have++ : k - 1;
        while (p > 0 && topS[p - 1] < s) { topS[p] = topS[p - 1]; topR[p] = topR[p - 1]; p--; }
        topS[p] = s;
        topR[p] = (long)r;
      }
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    printf("%.6f", (t1.tv_sec - t0.tv_sec) * 1e3 + (t1.tv_nsec - t0.tv_nsec) / 1e6);
    for (size_t j = 0; j < have; j++) printf(" %ld", topR[j]);
    printf("\n");
  }
  return 0;
}
`

export type CFloor = { skipped: string } | { compiler: string; ms: number[]; rows: number[][] }

/** Compile (when a compiler is present) and run the C scan over `matrix` (n × dim) for each query. */
export function runCFloor(matrix: Float32Array, n: number, dim: number, queries: Float32Array[], k: number): CFloor {
  const cc = process.env.CC || 'cc'
  const probe = spawnSync(cc, ['--version'], { encoding: 'utf8' })
  if (probe.error || probe.status !== 0) return { skipped: `no cc (${cc} not found)` }
  fs.mkdirSync(CACHE, { recursive: true })
  const src = path.join(CACHE, 'cfloor.c')
  const bin = path.join(CACHE, 'cfloor')
  fs.writeFileSync(src, C_SOURCE)
  const build = spawnSync(cc, ['-O3', '-march=native', '-std=c11', '-o', bin, src], { encoding: 'utf8' })
  if (build.status !== 0)
    return {
      skipped: `cc failed: ${
        (build.stderr || build.error?.message || '')
          .trim()
          .split('\n')
          .find((l) => l.includes('error')) ?? build.stderr
      }`,
    }
  // The matrix file is reused while its size matches (the fixture is deterministic).
  const mFile = path.join(CACHE, `cfloor-${n}x${dim}.f32`)
  const bytes = n * dim * 4
  if (!fs.existsSync(mFile) || fs.statSync(mFile).size !== bytes) fs.writeFileSync(mFile, Buffer.from(matrix.buffer, matrix.byteOffset, bytes))
  const qFile = path.join(CACHE, 'cfloor-queries.f32')
  const qs = new Float32Array(queries.length * dim)
  queries.forEach((q, i) => qs.set(q, i * dim))
  fs.writeFileSync(qFile, Buffer.from(qs.buffer))
  const run = spawnSync(bin, [mFile, String(n), String(dim), qFile, String(queries.length), String(k)], { encoding: 'utf8', maxBuffer: 1 << 26 })
  if (run.status !== 0) return { skipped: `the C scan failed: ${(run.stderr || '').trim().split('\n')[0]}` }
  const lines = run.stdout.trim().split('\n')
  const ms: number[] = []
  const rows: number[][] = []
  for (const line of lines) {
    const [t, ...rs] = line.trim().split(/\s+/)
    ms.push(Number(t))
    rows.push(rs.map(Number))
  }
  return { compiler: probe.stdout.split('\n')[0].trim(), ms, rows }
}
