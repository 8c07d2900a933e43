// tsne.js — Barnes-Hut t-SNE in two or three dimensions (van der Maaten, 2014), as
// the Projector runs it in a worker: one `step()` per iteration, so the
// worker can post positions between steps and the page animates them.
//
// Input similarities: each point's 3 * perplexity nearest neighbours
// (exact, brute force over the points, after PCA to at most 50 dimensions
// as usual for t-SNE), a Gaussian whose width is found by bisection to
// give the perplexity asked for, symmetrized and normalized. Gradient:
// attraction over those sparse pairs, repulsion from a quadtree (an octree
// in 3D) whose cells farther than theta (0.5) act as one point. Optimizer: gradient
// descent with momentum (0.5, then 0.8 after 250 iterations), per-
// coordinate gains, early exaggeration 12 for the first 250 iterations.
// A seeded generator makes the run repeatable.

export function seededRandom(seed) {
  let s = seed >>> 0 || 1;
  return () => {
    s ^= s << 13; s >>>= 0;
    s ^= s >>> 17;
    s ^= s << 5; s >>>= 0;
    return s / 4294967296;
  };
}

// The k nearest neighbours of every point by squared euclidean distance:
// { index: Int32Array n*k, dist2: Float64Array n*k }, nearest first.
export function nearestAll(x, n, d, k) {
  const index = new Int32Array(n * k), dist2 = new Float64Array(n * k);
  const norms = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    let s = 0;
    for (let j = 0, o = i * d; j < d; j++) s += x[o + j] * x[o + j];
    norms[i] = s;
  }
  const bestD = new Float64Array(k), bestI = new Int32Array(k);
  for (let i = 0; i < n; i++) {
    bestD.fill(Infinity);
    bestI.fill(-1);
    const oi = i * d;
    for (let q = 0; q < n; q++) {
      if (q === i) continue;
      let dot = 0;
      for (let j = 0, oq = q * d; j < d; j++) dot += x[oi + j] * x[oq + j];
      const dd = Math.max(0, norms[i] + norms[q] - 2 * dot);
      if (dd >= bestD[k - 1]) continue;
      let p = k - 1;   // insertion into the sorted list
      while (p > 0 && bestD[p - 1] > dd) {
        bestD[p] = bestD[p - 1];
        bestI[p] = bestI[p - 1];
        p--;
      }
      bestD[p] = dd;
      bestI[p] = q;
    }
    index.set(bestI, i * k);
    dist2.set(bestD, i * k);
  }
  return { index, dist2 };
}

// Row i's conditional probabilities over its k neighbours, with the
// Gaussian's precision found by bisection so that the entropy is
// log(perplexity).
function conditionalRow(dist2, off, k, perplexity, out) {
  const target = Math.log(perplexity);
  let beta = 1, lo = -Infinity, hi = Infinity;
  const base = dist2[off];   // subtracting the nearest keeps exp() in range
  for (let iter = 0; iter < 200; iter++) {
    let sum = 0, dsum = 0;
    for (let j = 0; j < k; j++) {
      const p = Math.exp(-beta * (dist2[off + j] - base));
      out[j] = p;
      sum += p;
      dsum += p * (dist2[off + j] - base);
    }
    const entropy = Math.log(sum) + beta * dsum / sum;
    for (let j = 0; j < k; j++) out[j] /= sum;
    const diff = entropy - target;
    if (Math.abs(diff) < 1e-5) break;
    if (diff > 0) {
      lo = beta;
      beta = hi === Infinity ? beta * 2 : (beta + hi) / 2;
    } else {
      hi = beta;
      beta = lo === -Infinity ? beta / 2 : (beta + lo) / 2;
    }
  }
}

// The symmetric joint probabilities as sparse rows (CSR): rowStart,
// col, val, with P_ij = (p_j|i + p_i|j) / 2n.
export function jointProbabilities(nn, n, k, perplexity) {
  const cond = new Float64Array(n * k), row = new Float64Array(k);
  for (let i = 0; i < n; i++) {
    conditionalRow(nn.dist2, i * k, k, perplexity, row);
    cond.set(row, i * k);
  }
  const maps = Array.from({ length: n }, () => new Map());
  for (let i = 0; i < n; i++) {
    for (let j = 0; j < k; j++) {
      const q = nn.index[i * k + j], v = cond[i * k + j] / (2 * n);
      maps[i].set(q, (maps[i].get(q) || 0) + v);
      maps[q].set(i, (maps[q].get(i) || 0) + v);
    }
  }
  const rowStart = new Int32Array(n + 1);
  for (let i = 0; i < n; i++) rowStart[i + 1] = rowStart[i] + maps[i].size;
  const col = new Int32Array(rowStart[n]), val = new Float64Array(rowStart[n]);
  for (let i = 0; i < n; i++) {
    let p = rowStart[i];
    for (const [q, v] of maps[i]) {
      col[p] = q;
      val[p++] = v;
    }
  }
  return { rowStart, col, val };
}

// ---- the space-partitioning tree ---------------------------------------------------------
// A quadtree in 2D, an octree in 3D: each cell splits into 2^dims children.
// Points and cells keep three coordinates in either case (z = 0 in 2D, where
// it stays 0 and costs a few multiplications), so the hot loops are the
// same unrolled code for both. Flat arrays: per cell its centre of mass,
// mass, lowest corner and edge length, the one point it holds while a
// leaf, its children (0: none) and how many it has.
class SpaceTree {
  constructor(capacity, dims) {
    this.cap = capacity;
    this.dims = dims;
    this.fan = 1 << dims;
    this.com = new Float64Array(capacity * 3);
    this.corner = new Float64Array(capacity * 3);
    this.mass = new Float64Array(capacity);
    this.size = new Float64Array(capacity);
    this.point = new Int32Array(capacity);
    this.child = new Int32Array(capacity * this.fan);
    this.kids = new Uint8Array(capacity);
    this.count = 0;
  }

  // A new empty cell at corner (x, y, z) with edge `size`.
  cell(x, y, z, size) {
    const c = this.count++;
    this.corner[3 * c] = x; this.corner[3 * c + 1] = y; this.corner[3 * c + 2] = z;
    this.com[3 * c] = 0; this.com[3 * c + 1] = 0; this.com[3 * c + 2] = 0;
    this.size[c] = size;
    this.mass[c] = 0;
    this.point[c] = -1;
    this.kids[c] = 0;
    this.child.fill(0, c * this.fan, (c + 1) * this.fan);
    return c;
  }

  build(y, n) {
    const lo = [Infinity, Infinity, Infinity], hi = [-Infinity, -Infinity, -Infinity];
    for (let i = 0; i < 3 * n; i++) {
      const k = i % 3, v = y[i];
      if (v < lo[k]) lo[k] = v;
      if (v > hi[k]) hi[k] = v;
    }
    const size = Math.max(hi[0] - lo[0], hi[1] - lo[1], hi[2] - lo[2], 1e-9) * 1.0001;
    this.count = 0;
    this.cell(lo[0], lo[1], lo[2], size);
    for (let i = 0; i < n; i++) this.insert(0, i, y);
  }

  // Which child of cell c point i falls in: bit k set for the upper half
  // along coordinate k (z only in 3D).
  orthant(c, i, y) {
    const half = this.size[c] / 2, o = 3 * c;
    let q = (y[3 * i] >= this.corner[o] + half ? 1 : 0) + (y[3 * i + 1] >= this.corner[o + 1] + half ? 2 : 0);
    if (this.dims === 3 && y[3 * i + 2] >= this.corner[o + 2] + half) q += 4;
    return q;
  }

  insert(c, i, y) {
    const px = y[3 * i], py = y[3 * i + 1], pz = y[3 * i + 2];
    for (let depth = 0; ; depth++) {
      const m = this.mass[c], o = 3 * c;
      this.com[o] = (this.com[o] * m + px) / (m + 1);
      this.com[o + 1] = (this.com[o + 1] * m + py) / (m + 1);
      this.com[o + 2] = (this.com[o + 2] * m + pz) / (m + 1);
      this.mass[c] = m + 1;
      if (m === 0) {   // an empty leaf takes the point
        this.point[c] = i;
        return;
      }
      if (this.point[c] >= 0) {   // a leaf splits: its point moves down
        const j = this.point[c];
        this.point[c] = -1;
        if (depth > 50 || this.count + 8 > this.cap) {   // duplicates: keep them together
          this.point[c] = j;
          return;
        }
        this.push(c, j, y);
      }
      const q = this.orthant(c, i, y);
      c = this.child[c * this.fan + q] || this.attach(c, q);
    }
  }

  attach(c, q) {
    const half = this.size[c] / 2, o = 3 * c;
    const ch = this.cell(this.corner[o] + (q & 1 ? half : 0), this.corner[o + 1] + (q & 2 ? half : 0),
      this.corner[o + 2] + (q & 4 ? half : 0), half);
    this.child[c * this.fan + q] = ch;
    this.kids[c]++;
    return ch;
  }

  // Moves a leaf's own point j into the child it falls in.
  push(c, j, y) {
    const ch = this.attach(c, this.orthant(c, j, y));
    this.com[3 * ch] = y[3 * j]; this.com[3 * ch + 1] = y[3 * j + 1]; this.com[3 * ch + 2] = y[3 * j + 2];
    this.mass[ch] = 1;
    this.point[ch] = j;
  }

  // Repulsive force on point i (unnormalized) into out[0..2]; returns its
  // share of Z, the sum of q over all pairs.
  repulse(i, y, theta2, stack, out) {
    const fan = this.fan, px = y[3 * i], py = y[3 * i + 1], pz = y[3 * i + 2];
    let fx = 0, fy = 0, fz = 0, z = 0, top = 0;
    stack[top++] = 0;
    while (top > 0) {
      const c = stack[--top];
      const m = this.mass[c];
      if (m === 0 || this.point[c] === i && m === 1) continue;
      const dx = px - this.com[3 * c], dy = py - this.com[3 * c + 1], dz = pz - this.com[3 * c + 2];
      const d2 = dx * dx + dy * dy + dz * dz;
      if (this.kids[c] === 0 || this.size[c] * this.size[c] < theta2 * d2) {
        const self = this.point[c] === i ? 1 : 0;   // a leaf of duplicates holding i
        const q = 1 / (1 + d2), mq = (m - self) * q;
        z += mq;
        fx += mq * q * dx;
        fy += mq * q * dy;
        fz += mq * q * dz;
      } else {
        for (let k = c * fan, end = k + fan; k < end; k++) {
          const ch = this.child[k];
          if (ch) stack[top++] = ch;
        }
      }
    }
    out[0] = fx;
    out[1] = fy;
    out[2] = fz;
    return z;
  }
}

// ---- the optimizer ------------------------------------------------------------------------

// Positions are kept as x, y, z per point whatever dims (z = 0 in 2D).
export class TSNE {
  constructor(x, n, d, { perplexity = 30, learningRate = 0, seed = 1, theta = 0.5, dims = 2 } = {}) {
    if (dims !== 2 && dims !== 3) throw new Error(`t-SNE embeds in 2 or 3 dimensions, not ${dims}`);
    this.n = n;
    this.dims = dims;
    this.theta2 = theta * theta;
    this.learningRate = learningRate > 0 ? learningRate : Math.max(n / 12 / 4, 50);
    const k = Math.max(1, Math.min(n - 1, Math.floor(3 * perplexity)));
    this.P = jointProbabilities(nearestAll(x, n, d, k), n, k, Math.min(perplexity, (n - 1) / 3 || 1));
    const rand = seededRandom(seed);
    this.y = new Float64Array(3 * n);
    for (let i = 0; i < n; i++) for (let c = 0; c < dims; c++) this.y[3 * i + c] = (rand() - 0.5) * 1e-4 * 2;
    this.update = new Float64Array(3 * n);
    this.gains = new Float64Array(3 * n).fill(1);
    this.grad = new Float64Array(3 * n);
    this.rep = new Float64Array(3 * n);
    this.tree = new SpaceTree(Math.max(64, 4 * n + 64), dims);
    this.stack = new Int32Array(Math.max(64, 4 * n + 64));   // a cell is pushed at most once
    this.out = new Float64Array(3);
    this.iteration = 0;
  }

  gradient() {
    const { n, y, grad, rep, P, out } = this;
    const exaggeration = this.iteration < 250 ? 12 : 1;
    this.tree.build(y, n);
    let z = 0;
    for (let i = 0; i < n; i++) {
      z += this.tree.repulse(i, y, this.theta2, this.stack, out);
      rep[3 * i] = out[0];
      rep[3 * i + 1] = out[1];
      rep[3 * i + 2] = out[2];
    }
    for (let i = 0; i < n; i++) {
      let ax = 0, ay = 0, az = 0;
      const yx = y[3 * i], yy = y[3 * i + 1], yz = y[3 * i + 2];
      for (let p = P.rowStart[i]; p < P.rowStart[i + 1]; p++) {
        const j = P.col[p];
        const dx = yx - y[3 * j], dy = yy - y[3 * j + 1], dz = yz - y[3 * j + 2];
        const w = (exaggeration * P.val[p]) / (1 + dx * dx + dy * dy + dz * dz);
        ax += w * dx;
        ay += w * dy;
        az += w * dz;
      }
      grad[3 * i] = 4 * (ax - rep[3 * i] / z);
      grad[3 * i + 1] = 4 * (ay - rep[3 * i + 1] / z);
      grad[3 * i + 2] = 4 * (az - rep[3 * i + 2] / z);
    }
  }

  step() {
    this.gradient();
    const { y, grad, update, gains, n } = this;
    const momentum = this.iteration < 250 ? 0.5 : 0.8;
    for (let i = 0; i < y.length; i++) {
      const sameSign = Math.sign(grad[i]) === Math.sign(update[i]);
      gains[i] = Math.max(0.01, sameSign ? gains[i] * 0.8 : gains[i] + 0.2);
      update[i] = momentum * update[i] - this.learningRate * gains[i] * grad[i];
      y[i] += update[i];
    }
    // Keep the cloud centred (the gradient is translation invariant).
    let mx = 0, my = 0, mz = 0;
    for (let i = 0; i < n; i++) { mx += y[3 * i]; my += y[3 * i + 1]; mz += y[3 * i + 2]; }
    mx /= n; my /= n; mz /= n;
    for (let i = 0; i < n; i++) { y[3 * i] -= mx; y[3 * i + 1] -= my; y[3 * i + 2] -= mz; }
    this.iteration++;
  }

  // Positions as x, y, z per point (z = 0 in 2D).
  positions() {
    return Float32Array.from(this.y);
  }
}
