// projector.worker.js — the Projector's computations, off the page's
// thread: PCA (pca.js), t-SNE (tsne.js) and UMAP (umap-js). One message in,
// { kind, id, vectors: Float32Array n*d, n, d, options }; messages out:
//   { id, type: 'pca', positions, ratio, variance }       once
//   { id, type: 'progress', iteration, positions }        t-SNE/UMAP, as they go
//   { id, type: 'done', iteration, positions, ms }        t-SNE/UMAP, at the end
//   { id, type: 'error', message }
// positions are Float32Array n*3 (transferred). t-SNE and UMAP run in a
// worker of their own, which the page terminates to stop them: a step
// loop then needs no message checks, and stopping is immediate.

import { UMAP } from 'umap-js';
import { principalComponents, project } from './pca.js';
import { TSNE, seededRandom } from './tsne.js';

const POST_EVERY_MS = 100;   // animation frames the page gets while a run goes on

// t-SNE and UMAP start from at most 50 principal components, as is usual:
// the neighbours barely change and the distances cost d / 50 less.
function reduced(x, n, d) {
  if (d <= 50) return { x, d };
  const pc = principalComponents(x, n, d, 50);
  const p = new Float32Array(n * 50);
  for (let i = 0; i < n; i++) {
    for (let t = 0; t < 50; t++) {
      const c = pc.components[t];
      let s = 0;
      for (let j = 0, o = i * d; j < d; j++) s += (x[o + j] - pc.mean[j]) * c[j];
      p[i * 50 + t] = s;
    }
  }
  return { x: p, d: 50 };
}

function post(id, type, iteration, positions, extra = {}) {
  self.postMessage({ id, type, iteration, positions, ...extra }, [positions.buffer]);
}

function runPca(id, x, n, d) {
  const pc = principalComponents(x, n, d, Math.min(10, d));
  const positions = project(x, n, d, pc, Math.min(3, d));
  self.postMessage({ id, type: 'pca', positions, ratio: pc.ratio, variance: pc.variance }, [positions.buffer]);
}

function runTsne(id, x, n, d, o) {
  const t0 = performance.now();
  const r = reduced(x, n, d);
  const tsne = new TSNE(r.x, n, r.d, { perplexity: o.perplexity, learningRate: o.learningRate, seed: o.seed ?? 1,
    dims: o.dimensions === 3 ? 3 : 2 });
  let last = performance.now();
  while (tsne.iteration < o.iterations) {
    tsne.step();
    if (performance.now() - last > POST_EVERY_MS) {
      post(id, 'progress', tsne.iteration, tsne.positions());
      last = performance.now();
    }
  }
  post(id, 'done', tsne.iteration, tsne.positions(), { ms: performance.now() - t0 });
}

function runUmap(id, x, n, d, o) {
  const t0 = performance.now();
  const r = reduced(x, n, d);
  const rows = [];
  for (let i = 0; i < n; i++) rows.push(Array.from(r.x.subarray(i * r.d, (i + 1) * r.d)));
  const dims = o.dimensions === 3 ? 3 : 2;
  const umap = new UMAP({ nComponents: dims, nNeighbors: Math.min(o.neighbors, n - 1), minDist: o.minDist,
    random: seededRandom(o.seed ?? 1) });
  const epochs = umap.initializeFit(rows);
  const positions = () => {
    const e = umap.getEmbedding(), out = new Float32Array(n * 3);
    for (let i = 0; i < n; i++) for (let k = 0; k < dims; k++) out[3 * i + k] = e[i][k];
    return out;
  };
  let last = performance.now(), epoch = 0;
  while (epoch < epochs) {
    epoch = umap.step();
    if (performance.now() - last > POST_EVERY_MS) {
      post(id, 'progress', epoch, positions());
      last = performance.now();
    }
  }
  post(id, 'done', epoch, positions(), { ms: performance.now() - t0 });
}

self.onmessage = (ev) => {
  const { kind, id, vectors, n, d, options = {} } = ev.data;
  try {
    if (kind === 'pca') runPca(id, vectors, n, d);
    else if (kind === 'tsne') runTsne(id, vectors, n, d, options);
    else if (kind === 'umap') runUmap(id, vectors, n, d, options);
    else throw new Error(`unknown computation '${kind}'`);
  } catch (e) {
    self.postMessage({ id, type: 'error', message: String(e?.message ?? e) });
  }
};
