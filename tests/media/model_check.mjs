// media/model_check.mjs — the Projector's and the Audio page's pure
// functions, in node: nearest neighbours (cosine and euclidean, exact
// values), regex search, colours and their legend, metadata parsing, the
// t-SNE of known clusters in 2D and 3D, a WAV read back, a tone's spectrogram bin.
import assert from 'node:assert/strict';
import { colourBy, nearest, parseMetadata, sampleIndices, search } from '../../static/projector/model.js';
import { principalComponents } from '../../static/projector/pca.js';
import { TSNE, seededRandom } from '../../static/projector/tsne.js';
import { spectrogram } from '../../static/audio/spectrogram.js';
import { readWav } from '../../static/audio/wav.js';

// ---- neighbours: 4 points in 2D -------------------------------------------------------
const x = new Float32Array([1, 0, 2, 0.1, 0, 1, -1, 0]);
const cos = nearest(x, 4, 2, 0, 3, 'cosine');
assert.deepEqual(cos.map((r) => r.index), [1, 2, 3]);
assert.ok(Math.abs(cos[0].distance - (1 - 2 / Math.sqrt(2 * 2 + Math.fround(0.1) ** 2))) < 1e-12);
assert.equal(cos[1].distance, 1);
assert.equal(cos[2].distance, 2);
const euc = nearest(x, 4, 2, 0, 2, 'euclidean');
assert.deepEqual(euc.map((r) => r.index), [1, 2]);
assert.ok(Math.abs(euc[0].distance - Math.hypot(1, Math.fround(0.1))) < 1e-7);
assert.equal(euc[1].distance, Math.SQRT2);

// ---- metadata, search, colours ---------------------------------------------------------------
const meta = parseMetadata('class\tlabel\nBag\t8\nCoat\t4\nBag\t8\n', 3);
assert.deepEqual(meta.columns, ['class', 'label']);
assert.deepEqual(meta.rows[1], ['Coat', '4']);
assert.deepEqual(search(meta, /^ba/i, 0), [0, 2]);
assert.deepEqual(search(meta, /4/, -1), [1]);
const c = colourBy(meta, 0, 3);
assert.equal(c.kind, 'category');
assert.deepEqual(c.legend.map((e) => [e.label, e.count]), [['Bag', 2], ['Coat', 1]]);
assert.deepEqual(Array.from(c.rgb.subarray(0, 3)), Array.from(c.rgb.subarray(6, 9)));
assert.notDeepEqual(Array.from(c.rgb.subarray(0, 3)), Array.from(c.rgb.subarray(3, 6)));
const many = parseMetadata(`v\n${Array.from({ length: 30 }, (_, i) => i / 2).join('\n')}\n`, 30);
assert.equal(colourBy(many, 0, 30).kind, 'number');
assert.deepEqual(colourBy(many, 0, 30).legend.map((e) => e.label), ['0', '14.5']);
assert.equal(parseMetadata('', 2).rows.length, 2);
const s = sampleIndices(100, 10);
assert.equal(s.length, 10);
assert.equal(new Set(s).size, 10);
assert.deepEqual(Array.from(s), Array.from(s).sort((a, b) => a - b));

// ---- t-SNE of three well-separated clusters: every point's 5 nearest in
// the embedding are of its own cluster ----------------------------------------------------------
{
  const n = 300, d = 10, r = seededRandom(11);
  const v = new Float32Array(n * d);
  for (let i = 0; i < n; i++) for (let j = 0; j < d; j++) v[i * d + j] = (j === i % 3 ? 8 : 0) + r() - 0.5;
  const t = new TSNE(v, n, d, { perplexity: 20, seed: 3 });
  for (let it = 0; it < 400; it++) t.step();
  const y = t.positions();
  let pure = 0;
  for (let i = 0; i < n; i++) {
    const nn = nearest(y, n, 3, i, 5, 'euclidean');
    if (nn.every((q) => q.index % 3 === i % 3)) pure++;
  }
  assert.equal(pure, n, `t-SNE kept ${pure} of ${n} points among their own cluster`);
}

// ---- t-SNE of four equidistant clusters (one-hot directions): every
// point's 5 nearest in the embedding are of its own cluster; in 3D the
// clusters sit at a near-regular tetrahedron (centroid distances within
// 30 % of each other, every axis carrying variance), which 2D cannot give:
// there they form a square, whose diagonals are sqrt(2) times its sides ---------
{
  const n = 400, d = 10, r = seededRandom(11);
  const v = new Float32Array(n * d);
  for (let i = 0; i < n; i++) for (let j = 0; j < d; j++) v[i * d + j] = (j === i % 4 ? 8 : 0) + r() - 0.5;
  const embed = (dims) => {
    const t = new TSNE(v, n, d, { perplexity: 20, seed: 3, dims });
    for (let it = 0; it < 400; it++) t.step();
    return t.positions();
  };
  const spread = (y) => {   // [shortest, longest] distance between cluster centroids
    const cen = [0, 1, 2, 3].map((c) => [0, 1, 2].map((k) => {
      let m = 0;
      for (let i = c; i < n; i += 4) m += y[3 * i + k];
      return m / (n / 4);
    }));
    const dist = [];
    for (let a = 0; a < 4; a++) for (let b = a + 1; b < 4; b++) dist.push(Math.hypot(...cen[a].map((x, k) => x - cen[b][k])));
    return [Math.min(...dist), Math.max(...dist)];
  };
  const y3 = embed(3), y2 = embed(2);
  let pure = 0;
  for (let i = 0; i < n; i++) if (nearest(y3, n, 3, i, 5, 'euclidean').every((q) => q.index % 4 === i % 4)) pure++;
  assert.equal(pure, n, `3D t-SNE kept ${pure} of ${n} points among their own cluster`);
  const axes = principalComponents(y3, n, 3, 3).ratio;
  assert.ok(Math.min(...axes) > 0.15, `3D t-SNE is flat: variance shares ${axes}`);
  const [lo3, hi3] = spread(y3), [lo2, hi2] = spread(y2);
  assert.ok(hi3 / lo3 < 1.3, `3D t-SNE: centroid distances ${lo3} to ${hi3}, not a tetrahedron`);
  assert.ok(hi2 / lo2 > 1.35, `2D t-SNE: centroid distances ${lo2} to ${hi2}, not a square`);
  assert.ok(y2.every((val, k) => k % 3 !== 2 || val === 0), '2D t-SNE keeps z = 0');
  assert.throws(() => new TSNE(v, n, d, { dims: 4 }), /^Error: t-SNE embeds in 2 or 3 dimensions, not 4$/);
}

// ---- a WAV read back, a tone's spectrogram -------------------------------------------------------
{
  const rate = 8000, frames = 4096;
  const buf = new ArrayBuffer(44 + frames * 2), dv = new DataView(buf);
  const put = (o, str) => [...str].forEach((ch, k) => dv.setUint8(o + k, ch.charCodeAt(0)));
  put(0, 'RIFF'); dv.setUint32(4, 36 + frames * 2, true); put(8, 'WAVEfmt ');
  dv.setUint32(16, 16, true); dv.setUint16(20, 1, true); dv.setUint16(22, 1, true);
  dv.setUint32(24, rate, true); dv.setUint32(28, rate * 2, true); dv.setUint16(32, 2, true); dv.setUint16(34, 16, true);
  put(36, 'data'); dv.setUint32(40, frames * 2, true);
  for (let i = 0; i < frames; i++) dv.setInt16(44 + 2 * i, Math.round(0.5 * Math.sin((2 * Math.PI * 1000 * i) / rate) * 32767), true);
  const w = readWav(buf);
  assert.equal(w.sampleRate, rate);
  assert.equal(w.frames, frames);
  assert.equal(w.samples[2], Math.round(0.5 * 32767) / 32768);
  const sp = spectrogram(w.samples, { size: 256, hop: 64 });
  assert.equal(sp.bins, 129);
  assert.equal(sp.frames, Math.floor((frames - 256) / 64) + 1);
  let best = 0;
  for (let b = 1; b < sp.bins; b++) if (sp.db[b] > sp.db[best]) best = b;
  assert.equal(best, 32, '1 kHz at 8 kHz in 256-sample windows is bin 32');
  assert.throws(() => readWav(new ArrayBuffer(8)), /not a WAV file/);
}
console.log('model_check: neighbours, search, colours, t-SNE clusters (2D and 3D), WAV and spectrogram as expected');
