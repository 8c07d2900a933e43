// model.js — what the Projector knows of one step's points besides their
// positions: the metadata table (parsed from the stored TSV), colours by a
// column with the legend that explains them, regex search over the
// columns, and nearest neighbours in the original space. Pure functions
// over typed arrays; node's tests import them.

// 20 colours that stay apart (Tableau 20, darker members first).
const PALETTE = ['#1f77b4', '#ff7f0e', '#2ca02c', '#d62728', '#9467bd', '#8c564b', '#e377c2', '#7f7f7f',
  '#bcbd22', '#17becf', '#aec7e8', '#ffbb78', '#98df8a', '#ff9896', '#c5b0d5', '#c49c94', '#f7b6d2',
  '#c7c7c7', '#dbdb8d', '#9edae5'];
export const MAX_CATEGORIES = PALETTE.length;
const NEUTRAL = '#546e7a';

// The stored text: a header line of column names, then one line per
// point, fields separated by tabs. { columns: [name], rows: n arrays }.
export function parseMetadata(text, n) {
  if (!text) return { columns: [], rows: Array.from({ length: n }, () => []) };
  const lines = text.split('\n');
  const columns = lines[0].split('\t');
  const rows = [];
  for (let i = 0; i < n; i++) rows.push((lines[i + 1] ?? '').split('\t'));
  return { columns, rows };
}

export function hexRgb(hex) {
  const v = parseInt(hex.slice(1), 16);
  return [(v >> 16) / 255, ((v >> 8) & 255) / 255, (v & 255) / 255];
}

// Colours of the points by column c (-1: none): categories (at most 20
// values) get a palette colour each; numbers a blue-to-orange ramp;
// anything else one colour. { rgb: Float32Array n*3, legend: [{label,
// colour, count}], kind }.
export function colourBy(meta, c, n) {
  const rgb = new Float32Array(n * 3);
  const fill = (i, hex) => rgb.set(hexRgb(hex), 3 * i);
  if (c < 0 || c >= meta.columns.length) {
    for (let i = 0; i < n; i++) fill(i, NEUTRAL);
    return { rgb, legend: [], kind: 'none' };
  }
  const values = meta.rows.map((r) => r[c] ?? '');
  const counts = new Map();
  for (const v of values) counts.set(v, (counts.get(v) || 0) + 1);
  if (counts.size <= MAX_CATEGORIES) {
    const cats = [...counts.keys()].sort((a, b) => (isNaN(a) || isNaN(b) ? a.localeCompare(b) : a - b));
    const colour = new Map(cats.map((v, k) => [v, PALETTE[k]]));
    values.forEach((v, i) => fill(i, colour.get(v)));
    return { rgb, legend: cats.map((v) => ({ label: v, colour: colour.get(v), count: counts.get(v) })), kind: 'category' };
  }
  const nums = values.map(Number);
  if (values.every((v, i) => v !== '' && Number.isFinite(nums[i]))) {
    let lo = Infinity, hi = -Infinity;
    for (const x of nums) { lo = Math.min(lo, x); hi = Math.max(hi, x); }
    const a = hexRgb('#1565c0'), b = hexRgb('#ef6c00');
    nums.forEach((x, i) => {
      const t = hi > lo ? (x - lo) / (hi - lo) : 0;
      rgb.set([0, 1, 2].map((k) => a[k] + (b[k] - a[k]) * t), 3 * i);
    });
    return { rgb, legend: [{ label: String(lo), colour: '#1565c0' }, { label: String(hi), colour: '#ef6c00' }], kind: 'number' };
  }
  for (let i = 0; i < n; i++) fill(i, NEUTRAL);
  return { rgb, legend: [{ label: `${counts.size} values: too many to colour`, colour: NEUTRAL }], kind: 'none' };
}

// The points whose column c (or any column, c < 0) matches re.
export function search(meta, re, c) {
  const out = [];
  meta.rows.forEach((r, i) => {
    if (c >= 0 ? re.test(r[c] ?? '') : r.some((v) => re.test(v))) out.push(i);
  });
  return out;
}

// The k points nearest to point q in the original space, by 'cosine'
// (1 - cosine similarity) or 'euclidean' distance: [{ index, distance }],
// nearest first. O(n d): 50,000 x 128 is a few milliseconds.
export function nearest(x, n, d, q, k, metric = 'cosine') {
  const oq = q * d;
  let qq = 0;
  for (let j = 0; j < d; j++) qq += x[oq + j] * x[oq + j];
  const best = [];
  for (let i = 0; i < n; i++) {
    if (i === q) continue;
    let dot = 0, ii = 0;
    for (let j = 0, o = i * d; j < d; j++) {
      const v = x[o + j];
      dot += v * x[oq + j];
      ii += v * v;
    }
    const dist = metric === 'cosine'
      ? 1 - dot / (Math.sqrt(qq * ii) || 1)
      : Math.sqrt(Math.max(0, qq + ii - 2 * dot));
    if (best.length < k || dist < best[best.length - 1].distance) {
      let p = best.length < k ? best.length : k - 1;
      best[p] = { index: i, distance: dist };
      while (p > 0 && best[p - 1].distance > best[p].distance) {
        [best[p - 1], best[p]] = [best[p], best[p - 1]];
        p--;
      }
    }
  }
  return best;
}

// A seeded sample of m of n indices (all of them when m >= n), ascending.
export function sampleIndices(n, m, seed = 7) {
  if (m >= n) return Int32Array.from({ length: n }, (_, i) => i);
  const idx = Int32Array.from({ length: n }, (_, i) => i);
  let s = seed;
  for (let i = 0; i < m; i++) {   // partial Fisher-Yates
    s = (s * 1103515245 + 12345) % 2147483648;
    const j = i + (s % (n - i));
    [idx[i], idx[j]] = [idx[j], idx[i]];
  }
  return idx.slice(0, m).sort();
}
