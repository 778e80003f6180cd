// Truncated SVD of a sparse matrix by randomized subspace iteration (Halko, Martinsson and Tropp
// 2011, algorithm 4.4), in plain TypeScript for scripts/build-word-vectors.ts: no native library,
// and the same input and seed give the same bits on every machine Node runs on.

import { prng } from '../bench/stats.js';

/** A sparse matrix in compressed-row form: row r holds cols/vals[rowStart[r] .. rowStart[r+1]). */
export interface SparseRows {
  readonly rows: number;
  readonly cols: number;
  readonly rowStart: Int32Array;
  readonly colIndex: Int32Array;
  readonly values: Float64Array;
}

/** A dense row-major matrix. */
interface Dense {
  readonly rows: number;
  readonly cols: number;
  readonly data: Float64Array;
}

/** A × D (D dense cols(A) × k), or Aᵀ × D when `transposed` (D dense rows(A) × k). */
function times(a: SparseRows, d: Dense, transposed = false): Dense {
  const k = d.cols;
  const rows = transposed ? a.cols : a.rows;
  const out = new Float64Array(rows * k);
  for (let r = 0; r < a.rows; r++) {
    for (let p = a.rowStart[r] as number; p < (a.rowStart[r + 1] as number); p++) {
      const v = a.values[p] as number;
      const c = a.colIndex[p] as number;
      const [to, from] = transposed ? [c, r] : [r, c];
      for (let j = 0; j < k; j++) out[to * k + j] = (out[to * k + j] as number) + v * (d.data[from * k + j] as number);
    }
  }
  return { rows, cols: k, data: out };
}

/** Orthonormalizes the columns in place (modified Gram-Schmidt, twice for stability), column by column in contiguous copies. */
function orthonormalize(m: Dense): Dense {
  const { rows, cols, data } = m;
  const columns = Array.from({ length: cols }, (_, j) => Float64Array.from({ length: rows }, (_, r) => data[r * cols + j] as number));
  for (let pass = 0; pass < 2; pass++) {
    for (let j = 0; j < cols; j++) {
      const cj = columns[j] as Float64Array;
      for (let i = 0; i < j; i++) {
        const ci = columns[i] as Float64Array;
        let dot = 0;
        for (let r = 0; r < rows; r++) dot += (ci[r] as number) * (cj[r] as number);
        for (let r = 0; r < rows; r++) cj[r] = (cj[r] as number) - dot * (ci[r] as number);
      }
      let norm = 0;
      for (let r = 0; r < rows; r++) norm += (cj[r] as number) ** 2;
      norm = Math.sqrt(norm) || 1;
      for (let r = 0; r < rows; r++) cj[r] = (cj[r] as number) / norm;
    }
  }
  for (let j = 0; j < cols; j++) for (let r = 0; r < rows; r++) data[r * cols + j] = (columns[j] as Float64Array)[r] as number;
  return m;
}

/** Eigenvalues and eigenvectors (columns of `vectors`) of a small symmetric matrix, by cyclic Jacobi. */
function symmetricEigen(n: number, matrix: Float64Array): { values: Float64Array; vectors: Float64Array } {
  const a = Float64Array.from(matrix);
  const v = new Float64Array(n * n);
  for (let i = 0; i < n; i++) v[i * n + i] = 1;
  for (let sweep = 0; sweep < 100; sweep++) {
    let off = 0;
    for (let p = 0; p < n; p++) for (let q = p + 1; q < n; q++) off += (a[p * n + q] as number) ** 2;
    if (off < 1e-22) break;
    for (let p = 0; p < n; p++) {
      for (let q = p + 1; q < n; q++) {
        const apq = a[p * n + q] as number;
        if (Math.abs(apq) < 1e-300) continue;
        const theta = ((a[q * n + q] as number) - (a[p * n + p] as number)) / (2 * apq);
        const t = Math.sign(theta || 1) / (Math.abs(theta) + Math.sqrt(theta * theta + 1));
        const c = 1 / Math.sqrt(t * t + 1);
        const s = t * c;
        for (let k = 0; k < n; k++) {
          const akp = a[k * n + p] as number;
          const akq = a[k * n + q] as number;
          a[k * n + p] = c * akp - s * akq;
          a[k * n + q] = s * akp + c * akq;
        }
        for (let k = 0; k < n; k++) {
          const apk = a[p * n + k] as number;
          const aqk = a[q * n + k] as number;
          a[p * n + k] = c * apk - s * aqk;
          a[q * n + k] = s * apk + c * aqk;
        }
        for (let k = 0; k < n; k++) {
          const vkp = v[k * n + p] as number;
          const vkq = v[k * n + q] as number;
          v[k * n + p] = c * vkp - s * vkq;
          v[k * n + q] = s * vkp + c * vkq;
        }
      }
    }
  }
  const values = new Float64Array(n);
  for (let i = 0; i < n; i++) values[i] = a[i * n + i] as number;
  return { values, vectors: v };
}

/**
 * The top `k` left singular vectors of `a` (rows × k, row-major) and their singular values,
 * largest first. `oversample` extra directions and `iterations` power steps sharpen the estimate.
 */
export function truncatedSvd(a: SparseRows, k: number, seed: number, oversample = 10, iterations = 4): { u: Float64Array; sigma: Float64Array } {
  const l = k + oversample;
  const random = prng(seed);
  const omega = new Float64Array(a.cols * l);
  for (let i = 0; i < omega.length; i++) omega[i] = random() * 2 - 1;
  let q = orthonormalize(times(a, { rows: a.cols, cols: l, data: omega }));
  for (let i = 0; i < iterations; i++) {
    const z = orthonormalize(times(a, q, true));
    q = orthonormalize(times(a, z));
  }
  // B = Qᵀ A (l × cols); B Bᵀ = (Aᵀ Q)ᵀ (Aᵀ Q) is l × l, whose eigenvectors rotate Q onto U.
  const bt = times(a, q, true);
  const gram = new Float64Array(l * l);
  for (let r = 0; r < bt.rows; r++) {
    for (let i = 0; i < l; i++) {
      const x = bt.data[r * l + i] as number;
      if (x === 0) continue;
      for (let j = i; j < l; j++) gram[i * l + j] = (gram[i * l + j] as number) + x * (bt.data[r * l + j] as number);
    }
  }
  for (let i = 0; i < l; i++) for (let j = 0; j < i; j++) gram[i * l + j] = gram[j * l + i] as number;
  const { values, vectors } = symmetricEigen(l, gram);
  const order = [...values.keys()].sort((x, y) => (values[y] as number) - (values[x] as number)).slice(0, k);
  const u = new Float64Array(a.rows * k);
  for (let r = 0; r < a.rows; r++) {
    for (let c = 0; c < k; c++) {
      const e = order[c] as number;
      let s = 0;
      for (let i = 0; i < l; i++) s += (q.data[r * l + i] as number) * (vectors[i * l + e] as number);
      u[r * k + c] = s;
    }
  }
  return { u, sigma: Float64Array.from(order, (e) => Math.sqrt(Math.max(0, values[e] as number))) };
}
