// pca.js — principal components of n points of dimension d (row-major
// Float32Array), as the Projector's PCA shows them: the points projected on
// the first components and the share of the variance each explains.
//
// The covariance matrix (d x d, in float64, over the centered points) is
// decomposed exactly, every eigenpair to machine precision (Householder
// tridiagonalization and implicit QL: O(d^3) once, 20 ms for d = 128).
// Its cost is O(n d^2) for the covariance, one pass. The variance ratios divide
// by the trace, the total variance, so they agree with NumPy's
// S**2 / sum(S**2) of the centered matrix's SVD. Each component's sign is
// fixed (its largest-magnitude entry positive), so two runs — and two
// steps of one embedding — agree.
//
// Pure functions: the worker runs them, and node's tests import them.

export function columnMeans(x, n, d) {
  const mean = new Float64Array(d);
  for (let i = 0; i < n; i++) {
    const o = i * d;
    for (let j = 0; j < d; j++) mean[j] += x[o + j];
  }
  for (let j = 0; j < d; j++) mean[j] /= n;
  return mean;
}

// The points' columns centered and copied column-major (one Float64Array
// per dimension), so each covariance entry is one dot product over two
// contiguous arrays, the loop engines make fastest; divided by n - 1 as
// NumPy's np.cov is (the ratios do not depend on it).
export function covariance(x, n, d, mean) {
  const cols = [];
  for (let j = 0; j < d; j++) {
    const col = new Float64Array(n), m = mean[j];
    for (let i = 0, o = j; i < n; i++, o += d) col[i] = x[o] - m;
    cols.push(col);
  }
  const c = new Float64Array(d * d);
  const div = Math.max(1, n - 1);
  // Four columns b at a time against one column a: each pass over column a
  // feeds four sums, a quarter of the memory traffic of one at a time.
  for (let a = 0; a < d; a++) {
    const ca = cols[a];
    let b = a;
    for (; b + 3 < d; b += 4) {
      const c0 = cols[b], c1 = cols[b + 1], c2 = cols[b + 2], c3 = cols[b + 3];
      let s0 = 0, s1 = 0, s2 = 0, s3 = 0;
      for (let i = 0; i < n; i++) {
        const v = ca[i];
        s0 += v * c0[i];
        s1 += v * c1[i];
        s2 += v * c2[i];
        s3 += v * c3[i];
      }
      c[a * d + b] = c[b * d + a] = s0 / div;
      c[a * d + b + 1] = c[(b + 1) * d + a] = s1 / div;
      c[a * d + b + 2] = c[(b + 2) * d + a] = s2 / div;
      c[a * d + b + 3] = c[(b + 3) * d + a] = s3 / div;
    }
    for (; b < d; b++) {
      const cb = cols[b];
      let s0 = 0;
      for (let i = 0; i < n; i++) s0 += ca[i] * cb[i];
      c[a * d + b] = c[b * d + a] = s0 / div;
    }
  }
  return c;
}

// Eigenpairs of the symmetric m x m matrix a (row-major, not changed):
// Householder reduction to tridiagonal form, then the implicit QL method
// (EISPACK's tred2 and tql2, as JAMA writes them) — O(m^3) once, every
// pair to machine precision. { values: Float64Array(m), vectors:
// Float64Array(m*m), column k the eigenvector of values[k] }, unsorted.
export function symmetricEigen(a, m) {
  const V = [];
  for (let i = 0; i < m; i++) V.push(Float64Array.from(a.subarray(i * m, i * m + m)));
  const d = new Float64Array(m), e = new Float64Array(m);
  tridiagonalize(V, d, e, m);
  diagonalize(V, d, e, m);
  const vectors = new Float64Array(m * m);
  for (let i = 0; i < m; i++) vectors.set(V[i], i * m);
  return { values: d, vectors };
}

function tridiagonalize(V, d, e, n) {
  for (let j = 0; j < n; j++) d[j] = V[n - 1][j];
  for (let i = n - 1; i > 0; i--) {
    let scale = 0, h = 0;
    for (let k = 0; k < i; k++) scale += Math.abs(d[k]);
    if (scale === 0) {
      e[i] = d[i - 1];
      for (let j = 0; j < i; j++) {
        d[j] = V[i - 1][j];
        V[i][j] = 0;
        V[j][i] = 0;
      }
    } else {
      for (let k = 0; k < i; k++) {
        d[k] /= scale;
        h += d[k] * d[k];
      }
      let f = d[i - 1], g = Math.sqrt(h);
      if (f > 0) g = -g;
      e[i] = scale * g;
      h -= f * g;
      d[i - 1] = f - g;
      for (let j = 0; j < i; j++) e[j] = 0;
      for (let j = 0; j < i; j++) {
        f = d[j];
        V[j][i] = f;
        g = e[j] + V[j][j] * f;
        for (let k = j + 1; k <= i - 1; k++) {
          g += V[k][j] * d[k];
          e[k] += V[k][j] * f;
        }
        e[j] = g;
      }
      f = 0;
      for (let j = 0; j < i; j++) {
        e[j] /= h;
        f += e[j] * d[j];
      }
      const hh = f / (h + h);
      for (let j = 0; j < i; j++) e[j] -= hh * d[j];
      for (let j = 0; j < i; j++) {
        f = d[j];
        g = e[j];
        for (let k = j; k <= i - 1; k++) V[k][j] -= f * e[k] + g * d[k];
        d[j] = V[i - 1][j];
        V[i][j] = 0;
      }
    }
    d[i] = h;
  }
  // Accumulate the transformations.
  for (let i = 0; i < n - 1; i++) {
    V[n - 1][i] = V[i][i];
    V[i][i] = 1;
    const h = d[i + 1];
    if (h !== 0) {
      for (let k = 0; k <= i; k++) d[k] = V[k][i + 1] / h;
      for (let j = 0; j <= i; j++) {
        let g = 0;
        for (let k = 0; k <= i; k++) g += V[k][i + 1] * V[k][j];
        for (let k = 0; k <= i; k++) V[k][j] -= g * d[k];
      }
    }
    for (let k = 0; k <= i; k++) V[k][i + 1] = 0;
  }
  for (let j = 0; j < n; j++) {
    d[j] = V[n - 1][j];
    V[n - 1][j] = 0;
  }
  V[n - 1][n - 1] = 1;
  e[0] = 0;
}

function diagonalize(V, d, e, n) {
  for (let i = 1; i < n; i++) e[i - 1] = e[i];
  e[n - 1] = 0;
  let f = 0, tst1 = 0;
  const eps = 2 ** -52;
  for (let l = 0; l < n; l++) {
    tst1 = Math.max(tst1, Math.abs(d[l]) + Math.abs(e[l]));
    let m = l;
    while (m < n && Math.abs(e[m]) > eps * tst1) m++;
    if (m > l) {
      do {
        let g = d[l];
        let p = (d[l + 1] - g) / (2 * e[l]);
        let r = Math.hypot(p, 1);
        if (p < 0) r = -r;
        d[l] = e[l] / (p + r);
        d[l + 1] = e[l] * (p + r);
        const dl1 = d[l + 1];
        let h = g - d[l];
        for (let i = l + 2; i < n; i++) d[i] -= h;
        f += h;
        p = d[m];
        let c = 1, c2 = c, c3 = c, s = 0, s2 = 0;
        const el1 = e[l + 1];
        for (let i = m - 1; i >= l; i--) {
          c3 = c2;
          c2 = c;
          s2 = s;
          g = c * e[i];
          h = c * p;
          r = Math.hypot(p, e[i]);
          e[i + 1] = s * r;
          s = e[i] / r;
          c = p / r;
          p = c * d[i] - s * g;
          d[i + 1] = h + s * (c * g + s * d[i]);
          for (let k = 0; k < n; k++) {
            const row = V[k];
            h = row[i + 1];
            row[i + 1] = s * row[i] + c * h;
            row[i] = c * row[i] - s * h;
          }
        }
        p = (-s * s2 * c3 * el1 * e[l]) / dl1;
        e[l] = s * p;
        d[l] = c * p;
      } while (Math.abs(e[l]) > eps * tst1);
    }
    d[l] += f;
    e[l] = 0;
  }
}

// { components: k arrays of d (unit, sign fixed), variance: k eigenvalues,
//   ratio: k shares of the total variance, total, mean }
export function principalComponents(x, n, d, k = 10) {
  k = Math.min(k, d);
  const mean = columnMeans(x, n, d);
  const c = covariance(x, n, d, mean);
  let total = 0;
  for (let j = 0; j < d; j++) total += c[j * d + j];
  const e = symmetricEigen(c, d);
  const order = [...e.values.keys()].sort((i, j) => e.values[j] - e.values[i]).slice(0, k);
  const values = order.map((i) => e.values[i]);
  const vec = (r, t) => e.vectors[r * d + order[t]];
  const components = [];
  for (let t = 0; t < k; t++) {
    const comp = new Float64Array(d);
    let big = 0;
    for (let r = 0; r < d; r++) {
      comp[r] = vec(r, t);
      if (Math.abs(comp[r]) > Math.abs(big)) big = comp[r];
    }
    if (big < 0) for (let r = 0; r < d; r++) comp[r] = -comp[r];
    components.push(comp);
  }
  const variance = values.map((v) => Math.max(0, v));
  return { components, variance, ratio: variance.map((v) => (total > 0 ? v / total : 0)), total, mean };
}

// The points (centered) projected on `count` components: Float32Array n*3
// (x, y, z; z = 0 when count is 2).
export function project(x, n, d, pc, count = 3) {
  const out = new Float32Array(n * 3);
  const comps = pc.components.slice(0, count);
  for (let i = 0; i < n; i++) {
    const o = i * d;
    for (let t = 0; t < comps.length; t++) {
      const comp = comps[t];
      let s = 0;
      for (let j = 0; j < d; j++) s += (x[o + j] - pc.mean[j]) * comp[j];
      out[i * 3 + t] = s;
    }
  }
  return out;
}
