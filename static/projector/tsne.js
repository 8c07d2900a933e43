// tsne.js — Barnes-Hut t-SNE in two dimensions (van der Maaten, 2014), as
// the Projector runs it in a worker: one `step()` per iteration, so the
// worker can post positions between steps and the page animates them.
//
// Input similarities: each point's 3 * perplexity nearest neighbours
// (exact, brute force over the points, after PCA to at most 50 dimensions
// as usual for t-SNE), a Gaussian whose width is found by bisection to
// give the perplexity asked for, symmetrized and normalized. Gradient:
// attraction over those sparse pairs, repulsion from a quadtree whose
// cells farther than theta (0.5) act as one point. Optimizer: gradient
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

// ---- the quadtree ---------------------------------------------------------------------
// Flat arrays: per cell its centre of mass, mass, bounds, the one point it
// holds while a leaf, and its four children (0: none).
class QuadTree {
  constructor(capacity) {
    this.cap = capacity;
    this.cx = new Float64Array(capacity); this.cy = new Float64Array(capacity);
    this.mass = new Float64Array(capacity);
    this.x0 = new Float64Array(capacity); this.y0 = new Float64Array(capacity);
    this.size = new Float64Array(capacity);
    this.point = new Int32Array(capacity);
    this.child = new Int32Array(capacity * 4);
    this.count = 0;
  }

  cell(x0, y0, size) {
    const c = this.count++;
    this.x0[c] = x0; this.y0[c] = y0; this.size[c] = size;
    this.cx[c] = 0; this.cy[c] = 0; this.mass[c] = 0; this.point[c] = -1;
    this.child.fill(0, c * 4, c * 4 + 4);
    return c;
  }

  build(y, n) {
    let minX = Infinity, minY = Infinity, maxX = -Infinity, maxY = -Infinity;
    for (let i = 0; i < n; i++) {
      minX = Math.min(minX, y[2 * i]); maxX = Math.max(maxX, y[2 * i]);
      minY = Math.min(minY, y[2 * i + 1]); maxY = Math.max(maxY, y[2 * i + 1]);
    }
    const size = Math.max(maxX - minX, maxY - minY, 1e-9) * 1.0001;
    this.count = 0;
    this.cell(minX, minY, size);
    for (let i = 0; i < n; i++) this.insert(0, i, y[2 * i], y[2 * i + 1], y);
  }

  quadrant(c, px, py) {
    const half = this.size[c] / 2;
    return (px >= this.x0[c] + half ? 1 : 0) + (py >= this.y0[c] + half ? 2 : 0);
  }

  insert(c, i, px, py, y) {
    for (let depth = 0; ; depth++) {
      const m = this.mass[c];
      this.cx[c] = (this.cx[c] * m + px) / (m + 1);
      this.cy[c] = (this.cy[c] * m + py) / (m + 1);
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
        this.push(c, j, y[2 * j], y[2 * j + 1]);
      }
      const q = this.quadrant(c, px, py);
      let next = this.child[c * 4 + q];
      if (!next) {
        const half = this.size[c] / 2;
        next = this.cell(this.x0[c] + (q & 1 ? half : 0), this.y0[c] + (q & 2 ? half : 0), half);
        this.child[c * 4 + q] = next;
      }
      c = next;
    }
  }

  // Moves a leaf's own point into the child it falls in.
  push(c, j, px, py) {
    const q = this.quadrant(c, px, py);
    const half = this.size[c] / 2;
    const ch = this.cell(this.x0[c] + (q & 1 ? half : 0), this.y0[c] + (q & 2 ? half : 0), half);
    this.child[c * 4 + q] = ch;
    this.cx[ch] = px; this.cy[ch] = py; this.mass[ch] = 1; this.point[ch] = j;
  }

  // Repulsive force on point i (unnormalized) into out[0..1]; returns its
  // share of Z, the sum of q over all pairs.
  repulse(i, px, py, theta2, stack, out) {
    let fx = 0, fy = 0, z = 0, top = 0;
    stack[top++] = 0;
    while (top > 0) {
      const c = stack[--top];
      const m = this.mass[c];
      if (m === 0 || this.point[c] === i && m === 1) continue;
      const dx = px - this.cx[c], dy = py - this.cy[c];
      const d2 = dx * dx + dy * dy;
      const leaf = this.child[c * 4] === 0 && this.child[c * 4 + 1] === 0 && this.child[c * 4 + 2] === 0 && this.child[c * 4 + 3] === 0;
      if (leaf || this.size[c] * this.size[c] < theta2 * d2) {
        const self = this.point[c] === i ? 1 : 0;   // a leaf of duplicates holding i
        const q = 1 / (1 + d2), mq = (m - self) * q;
        z += mq;
        fx += mq * q * dx;
        fy += mq * q * dy;
      } else {
        for (let k = 0; k < 4; k++) {
          const ch = this.child[c * 4 + k];
          if (ch) stack[top++] = ch;
        }
      }
    }
    out[0] = fx;
    out[1] = fy;
    return z;
  }
}

// ---- the optimizer ------------------------------------------------------------------------

export class TSNE {
  constructor(x, n, d, { perplexity = 30, learningRate = 0, seed = 1, theta = 0.5 } = {}) {
    this.n = n;
    this.theta2 = theta * theta;
    this.learningRate = learningRate > 0 ? learningRate : Math.max(n / 12 / 4, 50);
    const k = Math.max(1, Math.min(n - 1, Math.floor(3 * perplexity)));
    this.P = jointProbabilities(nearestAll(x, n, d, k), n, k, Math.min(perplexity, (n - 1) / 3 || 1));
    const rand = seededRandom(seed);
    this.y = new Float64Array(2 * n);
    for (let i = 0; i < 2 * n; i++) this.y[i] = (rand() - 0.5) * 1e-4 * 2;
    this.update = new Float64Array(2 * n);
    this.gains = new Float64Array(2 * n).fill(1);
    this.grad = new Float64Array(2 * n);
    this.tree = new QuadTree(Math.max(64, 4 * n + 64));
    this.stack = new Int32Array(Math.max(64, 4 * n + 64));
    this.iteration = 0;
  }

  gradient() {
    const { n, y, grad, P } = this;
    const exaggeration = this.iteration < 250 ? 12 : 1;
    this.tree.build(y, n);
    const rep = new Float64Array(2 * n), out = [0, 0];
    let z = 0;
    for (let i = 0; i < n; i++) {
      z += this.tree.repulse(i, y[2 * i], y[2 * i + 1], this.theta2, this.stack, out);
      rep[2 * i] = out[0];
      rep[2 * i + 1] = out[1];
    }
    for (let i = 0; i < n; i++) {
      let ax = 0, ay = 0;
      const yx = y[2 * i], yy = y[2 * i + 1];
      for (let p = P.rowStart[i]; p < P.rowStart[i + 1]; p++) {
        const j = P.col[p];
        const dx = yx - y[2 * j], dy = yy - y[2 * j + 1];
        const w = (exaggeration * P.val[p]) / (1 + dx * dx + dy * dy);
        ax += w * dx;
        ay += w * dy;
      }
      grad[2 * i] = 4 * (ax - rep[2 * i] / z);
      grad[2 * i + 1] = 4 * (ay - rep[2 * i + 1] / z);
    }
  }

  step() {
    this.gradient();
    const { y, grad, update, gains } = this;
    const momentum = this.iteration < 250 ? 0.5 : 0.8;
    for (let i = 0; i < y.length; i++) {
      const sameSign = Math.sign(grad[i]) === Math.sign(update[i]);
      gains[i] = Math.max(0.01, sameSign ? gains[i] * 0.8 : gains[i] + 0.2);
      update[i] = momentum * update[i] - this.learningRate * gains[i] * grad[i];
      y[i] += update[i];
    }
    // Keep the cloud centred (the gradient is translation invariant).
    let mx = 0, my = 0;
    for (let i = 0; i < this.n; i++) { mx += y[2 * i]; my += y[2 * i + 1]; }
    mx /= this.n; my /= this.n;
    for (let i = 0; i < this.n; i++) { y[2 * i] -= mx; y[2 * i + 1] -= my; }
    this.iteration++;
  }

  // Positions as x, y, z = 0 per point.
  positions() {
    const out = new Float32Array(this.n * 3);
    for (let i = 0; i < this.n; i++) {
      out[3 * i] = this.y[2 * i];
      out[3 * i + 1] = this.y[2 * i + 1];
    }
    return out;
  }
}
