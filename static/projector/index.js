// The Projector dashboard (TensorBoard's embedding projector): the points
// of one embedding tag of one run at one step, projected by PCA (the first
// three components and the share of variance each explains), t-SNE or
// UMAP, drawn in 3D or 2D (view.js), coloured by a metadata column with a
// legend, labelled on hover, optionally as their sprite images. Search a
// column by regex, click a point for its nearest neighbours in the
// original space (cosine or euclidean), isolate what is selected — the
// projection then runs again on those points alone, so their own structure
// fills the view — and move through the steps to watch the points move.
//
// Every projection runs in a worker (projector.worker.js); t-SNE and UMAP
// (each in 2D or 3D) in one of their own, terminated to stop them, posting
// positions as they go so the page animates. They run on a seeded sample
// of at most 10,000 (t-SNE) or 5,000 (UMAP) points, as TensorBoard's
// projector does; the others are hidden while such a projection shows.

import { apiUrl, getJSON } from '../core/api.js';
import { counted, fillSelect, h } from '../core/dom.js';
import { colourBy, nearest, parseMetadata, sampleIndices, search } from './model.js';
import { createView } from './view.js';
import './projector.css';

export const name = 'projector';

const WORKER_URL = '/static/projector_projector.worker.js';
const SAMPLE = { tsne: 10000, umap: 5000 };
const NEIGHBOURS = 10;

const state = {
  run: null, tag: null, stepIndex: -1, projection: 'pca', dims: 3, colour: 0, sprites: true,
  metric: 'cosine', query: '', queryColumn: -1,
  tsne: { perplexity: 30, learningRate: 0, iterations: 1000 },
  umap: { neighbors: 15, minDist: 0.1 },
};

async function fetchBytes(path, params) {
  const res = await fetch(apiUrl(path, params), { cache: 'no-store' });
  if (!res.ok) {
    let msg = res.statusText;
    try { msg = (await res.json()).error || msg; } catch { /* not JSON */ }
    throw new Error(msg);
  }
  return res;
}

export function createPage(ctx) {
  let destroyed = false, token = 0;
  let steps = [];            // the tag's steps (list route)
  let data = null;           // { step, n, d, vectors, meta, sprite }
  let pca = null;            // { positions, ratio }
  let shown = null;          // positions on screen, n*3
  let subset = null;         // Int32Array: points a t-SNE/UMAP run covers, or null (all)
  let selection = [];        // searched or neighbour points
  let picked = -1;           // the clicked point
  let isolated = null;       // Set of points shown alone, or null
  let longRun = null;        // { worker, kind }
  let projectedOn = null;    // Int32Array: the points the projection shown ran on (isolated), or null (all)
  const pcaWorker = new Worker(WORKER_URL);
  let pcaJob = 0;

  // ---- controls --------------------------------------------------------------------------
  const select = (id, label, onchange) => h('select.filter', { id, 'aria-label': label, onchange });
  const runSelect = select('projector-run', 'Run', () => { state.run = runSelect.value; state.tag = null; reload(); });
  const tagSelect = select('projector-tag', 'Tag', () => { state.tag = tagSelect.value; state.stepIndex = -1; reload(); });
  const stepRange = h('input', { type: 'range', id: 'projector-step', min: 0, max: 0, value: 0, 'aria-label': 'Step',
    oninput: () => { state.stepIndex = +stepRange.value; loadStep().catch(failed); } });
  const stepText = h('span.projector-step-text');
  const projSelect = h('select.filter', { id: 'projector-projection', 'aria-label': 'Projection',
    onchange: () => { state.projection = projSelect.value; stopLong(); params(); project(); } },
  h('option', { value: 'pca' }, 'PCA'), h('option', { value: 'tsne' }, 't-SNE'), h('option', { value: 'umap' }, 'UMAP'));
  const dimsBox = h('label.check', null, h('input', { type: 'checkbox', id: 'projector-3d', checked: true,
    onchange: (e) => setDims(e.target.checked ? 3 : 2) }), '3D');
  const paramsBox = h('div.projector-params');
  const colourSelect = select('projector-colour', 'Colour by', () => { state.colour = +colourSelect.value; paint(); });
  const spriteBox = h('label.check', null, h('input', { type: 'checkbox', id: 'projector-sprites', checked: state.sprites,
    onchange: (e) => { state.sprites = e.target.checked; projector.showSprites(state.sprites); } }), 'Sprites');
  const searchInput = h('input.filter', { type: 'search', id: 'projector-search', placeholder: 'Search (regex)', spellcheck: false,
    oninput: () => { state.query = searchInput.value; runSearch(); } });
  const searchColumn = select('projector-search-column', 'Search in', () => { state.queryColumn = +searchColumn.value; runSearch(); });
  const metricSelect = h('select.filter', { id: 'projector-metric', 'aria-label': 'Distance',
    onchange: () => { state.metric = metricSelect.value; if (picked >= 0) pickPoint(picked); } },
  h('option', { value: 'cosine' }, 'cosine'), h('option', { value: 'euclidean' }, 'euclidean'));
  const isolateButton = h('button.small', { type: 'button', id: 'projector-isolate', onclick: () => isolate(true) }, 'Isolate selection');
  const showAllButton = h('button.small', { type: 'button', id: 'projector-show-all', onclick: () => isolate(false) }, 'Show all');

  const controls = h('div.projector-controls', null,
    h('div.section-title', null, 'Run'), runSelect,
    h('div.section-title', null, 'Tag'), tagSelect,
    h('div.section-title', null, 'Step'), h('div.slider-row', null, stepRange, stepText),
    h('div.section-title', null, 'Projection'), projSelect, dimsBox, paramsBox,
    h('div.section-title', null, 'Colour by'), colourSelect, spriteBox,
    h('div.section-title', null, 'Search'), searchInput, searchColumn,
    h('div.section-title', null, 'Neighbours'), metricSelect,
    h('div.projector-buttons', null, isolateButton, showAllButton));

  // ---- the view and its panels -------------------------------------------------------------
  const host = h('div.projector-view');
  const tooltip = h('div.projector-tooltip', { hidden: true });
  const status = h('div.projector-status.muted', { id: 'projector-status' });
  const legend = h('div.projector-legend', { id: 'projector-legend' });
  const info = h('div.projector-info', { id: 'projector-info' });
  const view = h('div.page.projector-page', null, h('div.projector-main', null, host, tooltip, status),
    h('div.projector-side', null, legend, info));
  const projector = createView(host, { onHover: hover, onPick: (i) => pickPoint(i),
    renderer: new URLSearchParams(location.search).get('renderer') });
  view.setAttribute('data-loaded', 'false');

  function failed(e) {
    status.textContent = `Could not load the embedding: ${e.message ?? e}`;
    view.dataset.loaded = 'true';
  }

  function params() {
    const num = (id, label, obj, key, min, max, stepv) => h('label.projector-param', null, label,
      h('input', { type: 'number', id, min, max, step: stepv, value: obj[key], onchange: (e) => { obj[key] = +e.target.value; } }));
    const runButtons = () => [
      h('button.small', { type: 'button', id: 'projector-run-projection', onclick: () => project() }, 'Run'),
      h('button.small', { type: 'button', id: 'projector-stop', onclick: () => stopLong(true) }, 'Stop')];
    if (state.projection === 'tsne') {
      paramsBox.replaceChildren(num('tsne-perplexity', 'Perplexity', state.tsne, 'perplexity', 2, 100, 1),
        num('tsne-learning-rate', 'Learning rate (0: auto)', state.tsne, 'learningRate', 0, 10000, 1),
        num('tsne-iterations', 'Iterations', state.tsne, 'iterations', 10, 10000, 10), h('div.projector-buttons', null, ...runButtons()));
    } else if (state.projection === 'umap') {
      paramsBox.replaceChildren(num('umap-neighbors', 'Neighbours', state.umap, 'neighbors', 2, 200, 1),
        num('umap-min-dist', 'Min distance', state.umap, 'minDist', 0, 1, 0.01), h('div.projector-buttons', null, ...runButtons()));
    } else {
      paramsBox.replaceChildren();
    }
  }

  // ---- loading -----------------------------------------------------------------------------
  async function reload() {
    const mine = ++token;
    try {
      const runs = ctx.runs.selected();
      const tags = (await getJSON('projector/tags')).runs;
      if (mine !== token || destroyed) return;
      const withTags = Object.keys(tags).filter((r) => tags[r].length);
      if (!withTags.includes(state.run)) state.run = withTags.find((r) => runs.includes(r)) ?? withTags[0] ?? null;
      fillSelect(runSelect, withTags, state.run);
      if (!state.run) {
        status.textContent = 'No embeddings: write some with gb_summary_embedding.';
        view.dataset.loaded = 'true';
        return;
      }
      const tagNames = tags[state.run].map((t) => t.tag);
      if (!tagNames.includes(state.tag)) state.tag = tagNames[0];
      fillSelect(tagSelect, tagNames, state.tag);
      const list = await getJSON('projector/list', { run: state.run, tag: state.tag });
      if (mine !== token || destroyed) return;
      const atEnd = state.stepIndex < 0 || state.stepIndex >= steps.length - 1;
      steps = list.steps;
      stepRange.max = String(Math.max(0, steps.length - 1));
      if (atEnd) state.stepIndex = steps.length - 1;
      stepRange.value = String(state.stepIndex);
      const s = steps[state.stepIndex];
      if (!data || data.run !== state.run || data.tag !== state.tag || data.step !== s.step) await loadStep();
    } catch (e) { failed(e); }
  }

  async function loadStep() {
    const mine = ++token;
    const s = steps[state.stepIndex];
    if (!s) return;
    stepText.textContent = `step ${s.step} (${state.stepIndex + 1}/${steps.length})`;
    status.textContent = `Loading ${s.n.toLocaleString()} points of dimension ${s.dim}…`;
    const q = { run: state.run, tag: state.tag, step: s.step };
    const [vec, metaText, sprite] = await Promise.all([
      fetchBytes('projector/vectors', q).then((r) => r.arrayBuffer()),
      s.metadata_bytes ? fetchBytes('projector/metadata', q).then((r) => r.text()) : '',
      s.sprite ? fetchBytes('projector/sprite', q).then((r) => r.blob()).then((b) => createImageBitmap(b)) : null,
    ]);
    if (mine !== token || destroyed) return;
    const sameShape = data && data.n === s.n;
    data = { run: state.run, tag: state.tag, step: s.step, n: s.n, d: s.dim, vectors: new Float32Array(vec),
      meta: parseMetadata(metaText, s.n), sprite: s.sprite };
    view.dataset.run = state.run;
    view.dataset.tag = state.tag;
    view.dataset.step = String(s.step);
    view.dataset.points = String(s.n);
    if (!sameShape) {
      projector.setCount(s.n);
      picked = -1;
      selection = [];
      isolated = null;
    }
    if (sprite) {
      const cols = Math.ceil(Math.sqrt(s.n));
      projector.setSprites(sprite, cols, Math.ceil(s.n / cols));
      projector.showSprites(state.sprites);
    }
    spriteBox.hidden = !sprite;
    const cols = data.meta.columns;
    fillSelect(colourSelect, [-1, ...cols.keys()], state.colour, (c) => (c < 0 ? 'none' : cols[c]));
    fillSelect(searchColumn, [-1, ...cols.keys()], state.queryColumn, (c) => (c < 0 ? 'all columns' : cols[c]));
    if (state.colour >= cols.length) state.colour = cols.length ? 0 : -1;
    paint();
    params();
    await project();
    if (picked >= 0) pickPoint(picked);
  }

  // ---- projections ---------------------------------------------------------------------------
  // The points a projection runs on: the isolated ones (when more than
  // one: a lone point stays where it is), or null for all of them.
  function projected() {
    return isolated && isolated.size > 1 ? Int32Array.from(isolated).sort() : null;
  }

  // The vectors of points idx (all of them when null), a row each.
  function gather(d, idx) {
    if (!idx) return d.vectors.slice();
    const out = new Float32Array(idx.length * d.d);
    idx.forEach((i, k) => out.set(d.vectors.subarray(i * d.d, (i + 1) * d.d), k * d.d));
    return out;
  }

  function pcaOf(d, points) {
    const id = ++pcaJob;
    return new Promise((resolve, reject) => {
      pcaWorker.onmessage = (ev) => {
        if (ev.data.id !== id) return;
        if (ev.data.type === 'error') reject(new Error(ev.data.message));
        else resolve(ev.data);
      };
      const vectors = gather(d, points);
      pcaWorker.postMessage({ kind: 'pca', id, vectors, n: points ? points.length : d.n, d: d.d }, [vectors.buffer]);
    });
  }

  async function project() {
    if (!data) return;
    const d = data;
    stopLong();
    view.dataset.iteration = '';   // until a run of this projection reports one
    status.textContent = 'Computing PCA…';
    const points = projected();
    projectedOn = points;
    const r = await pcaOf(d, points);
    if (d !== data || destroyed || projectedOn !== points) return;
    pca = { ...r, points };
    showVariance();
    view.dataset.projectedPoints = String(points ? points.length : d.n);
    if (state.projection === 'pca') {
      subset = points;
      showPositions(r.positions);
      status.textContent = points ? `PCA of the ${points.length.toLocaleString()} isolated points of dimension ${d.d}`
        : `PCA of ${d.n.toLocaleString()} points of dimension ${d.d}`;
      view.dataset.projection = 'pca';
      view.dataset.projectedStep = String(d.step);
      view.dataset.loaded = 'true';
    } else {
      if (!shown) {
        subset = points;
        showPositions(r.positions, 0);
      }
      startLong(state.projection, points);
    }
  }

  function showVariance() {
    const total = pca.ratio.slice(0, 3).reduce((a, b) => a + b, 0);
    info.dataset.variance = pca.ratio.slice(0, 3).map((v) => v.toFixed(6)).join(',');
    const rows = pca.ratio.slice(0, 3).map((v, k) => h('li', null, `PC${k + 1}: ${(100 * v).toFixed(1)} % of the variance`));
    const of = pca.points ? ` of the ${pca.points.length.toLocaleString()} isolated points` : '';
    info.replaceChildren(h('div.section-title', { id: 'projector-pca-title' }, `PCA${of}`),
      h('ul.projector-variance', { id: 'projector-variance' }, ...rows,
        h('li.muted', null, `together ${(100 * total).toFixed(1)} %`)),
      h('div.projector-neighbours', { id: 'projector-neighbours' }));
    if (picked >= 0) pickPoint(picked);
  }

  // Positions of the projection (n*3), or of a subset's run mapped back:
  // points outside the subset are hidden. `moved`: only the positions
  // changed (a running t-SNE/UMAP's next ones), not who is shown.
  function showPositions(p, ms, moved = false) {
    let full = p;
    if (state.dims === 2 && state.projection === 'pca') {
      full = p.slice();
      for (let i = 0; i < data.n; i++) full[3 * i + 2] = 0;
    }
    if (subset) {
      full = new Float32Array(data.n * 3);
      for (let k = 0; k < subset.length; k++) {
        const o = 3 * subset[k];
        full[o] = p[3 * k];
        full[o + 1] = p[3 * k + 1];
        full[o + 2] = p[3 * k + 2];
      }
    }
    shown = full;
    projector.setPositions(full, ms);
    if (!moved) visibility();
  }

  // 2D or 3D: PCA shows its third component or not; t-SNE and UMAP run
  // again in the new number of dimensions, as TensorBoard's projector does.
  function setDims(dims) {
    state.dims = dims;
    projector.setMode(dims === 3 ? '3d' : '2d');
    if (state.projection !== 'pca') project();
    else if (pca) {
      subset = pca.points;
      showPositions(pca.positions, 0);
    }
  }

  // A t-SNE or UMAP run over `points` (null: all), or a seeded sample of
  // them when they are too many.
  function startLong(kind, points) {
    const d = data, n = points ? points.length : d.n;
    subset = points;
    if (n > SAMPLE[kind]) {
      const s = sampleIndices(n, SAMPLE[kind]);
      subset = points ? s.map((k) => points[k]) : s;
    }
    const m = subset ? subset.length : n;
    const vectors = gather(d, subset);
    const worker = new Worker(WORKER_URL);
    const options = { ...(kind === 'tsne' ? state.tsne : state.umap), dimensions: state.dims };
    const total = kind === 'tsne' ? state.tsne.iterations : null;
    longRun = { worker, kind, iteration: 0 };
    view.dataset.projection = kind;
    view.dataset.running = 'true';
    view.dataset.iteration = '0';
    const label = kind === 'tsne' ? 't-SNE' : 'UMAP';
    status.textContent = `${label}: finding neighbours of ${m.toLocaleString()} points…`;
    worker.onmessage = (ev) => {
      const msg = ev.data;
      if (d !== data || longRun?.worker !== worker) return;
      if (msg.type === 'error') { status.textContent = `${label} failed: ${msg.message}`; stopLong(); return; }
      const moved = longRun.iteration > 0;
      longRun.iteration = msg.iteration;
      view.dataset.iteration = String(msg.iteration);
      showPositions(msg.positions, 0, moved);
      const of = total ? ` of ${total}` : '';
      const which = points ? 'isolated points' : 'points';
      const sampled = m < n ? ` (a sample of ${m.toLocaleString()} of ${n.toLocaleString()} ${which})`
        : points ? ` (the ${m.toLocaleString()} ${which})` : '';
      if (msg.type === 'done') {
        status.textContent = `${label}: ${msg.iteration} iterations${sampled}, ${(msg.ms / 1000).toFixed(1)} s`;
        view.dataset.running = 'false';
        view.dataset.tsneMs = String(msg.ms);
        view.dataset.loaded = 'true';
        worker.terminate();
        longRun = null;
      } else {
        status.textContent = `${label}: iteration ${msg.iteration}${of}${sampled}`;
      }
    };
    worker.postMessage({ kind, id: 1, vectors, n: m, d: d.d, options }, [vectors.buffer]);
  }

  function stopLong(said = false) {
    if (!longRun) return;
    longRun.worker.terminate();
    if (said) status.textContent = `${longRun.kind === 'tsne' ? 't-SNE' : 'UMAP'} stopped at iteration ${longRun.iteration}`;
    view.dataset.running = 'false';
    view.dataset.loaded = 'true';
    longRun = null;
  }

  // ---- colour, search, neighbours, isolation ------------------------------------------------------
  function paint() {
    const c = colourBy(data.meta, state.colour, data.n);
    projector.setColors(c.rgb);
    legend.dataset.kind = c.kind;
    legend.replaceChildren(...(c.legend.length ? [h('div.section-title', null, data.meta.columns[state.colour] ?? '')] : []),
      ...c.legend.map((e) => h('div.projector-legend-row', null, h('span.projector-swatch', { style: { background: e.colour } }),
        e.label, e.count !== undefined ? h('span.muted', null, ` ${e.count}`) : null)));
  }

  function runSearch() {
    if (!data) return;
    let re = null;
    try { re = state.query ? new RegExp(state.query, 'i') : null; } catch { re = null; }
    searchInput.classList.toggle('invalid', !!state.query && !re);
    selection = re ? search(data.meta, re, state.queryColumn) : [];
    picked = -1;
    info.querySelector('#projector-neighbours')?.replaceChildren(
      re ? h('div', { id: 'projector-search-count' }, counted(selection.length, 'point matches', 'points match')) : '');
    visibility();
  }

  // Each point's opacity: hidden outside a t-SNE/UMAP sample or an
  // isolated selection, dimmed outside a selection, shown otherwise.
  function visibility() {
    const sel = new Set(selection);
    if (picked >= 0) sel.add(picked);
    const inRun = subset ? new Set(subset) : null;
    const alpha = new Float32Array(data.n);
    for (let i = 0; i < data.n; i++) {
      const shownHere = (!inRun || inRun.has(i)) && (!isolated || isolated.has(i));
      alpha[i] = !shownHere ? 0 : sel.size && !sel.has(i) ? 0.12 : 1;
    }
    projector.setAlpha(alpha);
    projector.setEmphasis(picked >= 0 ? [picked] : []);
    view.dataset.selected = String(sel.size);
    view.dataset.isolated = isolated ? String(isolated.size) : '';
  }

  function isolate(on) {
    if (!data) return;
    const sel = new Set(selection);
    if (picked >= 0) sel.add(picked);
    isolated = on && sel.size ? sel : null;
    // Re-projected on what is shown, as TensorBoard's projector does; a lone
    // point (or all of them again after a lone one) needs no new projection.
    if (projected() || projectedOn) project();
    else visibility();
  }

  function label(i) {
    const m = data.meta;
    if (!m.columns.length) return `point ${i}`;
    const c = state.colour >= 0 ? state.colour : 0;
    return m.rows[i][c] ?? `point ${i}`;
  }

  function hover(i, ev) {
    if (i < 0 || !ev) { tooltip.hidden = true; return; }
    const m = data.meta;
    const others = m.columns.map((c, k) => [c, k]).filter(([, k]) => k !== state.colour);
    tooltip.replaceChildren(h('b', null, label(i)), h('div.muted', null, `#${i}`),
      ...others.map(([c, k]) => h('div', null, `${c}: ${m.rows[i][k] ?? ''}`)));
    const r = host.getBoundingClientRect();
    tooltip.style.left = `${ev.clientX - r.left + 14}px`;
    tooltip.style.top = `${ev.clientY - r.top + 14}px`;
    tooltip.hidden = false;
    tooltip.dataset.index = String(i);
  }

  function pickPoint(i) {
    const box = info.querySelector('#projector-neighbours');
    if (i < 0 || !data) {
      picked = -1;
      selection = [];
      box?.replaceChildren();
      visibility();
      return;
    }
    picked = i;
    const nn = nearest(data.vectors, data.n, data.d, i, NEIGHBOURS, state.metric);
    selection = nn.map((r) => r.index);
    box?.replaceChildren(h('div.section-title', null, `Nearest to ${label(i)} (#${i}), ${state.metric}`),
      h('ol.projector-nn', { id: 'projector-nn' }, ...nn.map((r) => h('li', {
        'data-index': r.index, 'data-distance': r.distance, onclick: () => pickPoint(r.index),
      }, h('span', null, label(r.index)), h('span.muted', null, ` #${r.index}`), h('span.projector-distance', null, r.distance.toFixed(4))))));
    view.dataset.picked = String(i);
    visibility();
  }

  const page = {
    controls, view,
    refresh: () => reload(),
    onData: () => reload(),
    onRuns: () => reload(),
    destroy() {
      destroyed = true;
      stopLong();
      pcaWorker.terminate();
      projector.destroy();
    },
    // what the browser tests and the benchmark read
    get projector() { return projector; },
    get shown() { return shown; },
  };
  window.__projector = page;
  return page;
}
