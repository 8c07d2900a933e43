// The Graphs dashboard: every traced concrete function's graph (after the
// graph passes, or as traced) and every exported graph, drawn as name
// scopes that open and close, laid out one scope at a time in a Web Worker
// (layout.js) so a graph of any size opens at once and never freezes the
// page. Click an op for its pane; colour by op type, device, compute time
// or output memory; trace what feeds an op; search by name or op type;
// export the view as SVG. A link can open a graph at a node:
//   #graphs?run=R&trace=T            a traced concrete function
//   #graphs?run=R&function=F&node=N  F's newest one, revealing node N
//   (no function: the newest of the function traced first)
//   #graphs?run=R&tag=G&step=S       an exported graph
// (&alert=1 marks the node as the one a numerics alert names.)

import { getJSON } from '../core/api.js';
import { download, h } from '../core/dom.js';
import { MODES, colourer } from './colour.js';
import { ancestors, buildHierarchy, findNode, transitiveInputs } from './hierarchy.js';
import { Layouts } from './layout.js';
import { nodePane, scopePane } from './pane.js';
import { assemble, defs, draw, s } from './render.js';
import { svgFile } from './export.js';
import { Viewport } from './viewport.js';
import './graphs.css';

export const name = 'graphs';

const WORKER_URL = '/static/graphs_layout.worker.js';

// Kept across tab switches: what the person chose.
const state = { run: null, pick: null, stage: 'optimized', mode: 'op', traceInputs: false };

const optionKey = (c) => `t:${c.trace_id}`;

export function createPage(ctx) {
  let destroyed = false;
  let token = 0;
  let list = null;          // /api/graphs/list of state.run
  let shown = null;         // {key, data, model, colours}
  let open = new Set();     // opened scope keys
  let scene = null;
  let selected = null;      // a node or a scope
  let alertNode = null;     // the node a numerics alert names
  let traced = null;        // {nodes, groups} feeding the selected node
  let layouts = null;
  const timing = { firstPaintMs: null, expandMs: [] };
  window.__glassbox.graphs = timing;

  // ---- controls ------------------------------------------------------------------
  const runSelect = h('select.filter', { id: 'graphs-run', 'aria-label': 'Run',
    onchange: () => { state.run = runSelect.value; state.pick = null; reload().catch(report); } });
  const graphSelect = h('select.filter', { id: 'graphs-pick', 'aria-label': 'Graph',
    onchange: () => { state.pick = graphSelect.value; showPicked().catch(report); } });
  const stageSelect = h('select.filter', { id: 'graphs-stage', 'aria-label': 'Stage',
    onchange: () => { state.stage = stageSelect.value; showPicked().catch(report); } });
  const modeSelect = h('select.filter', { id: 'graphs-colour', 'aria-label': 'Colour by',
    onchange: () => { state.mode = modeSelect.value; recolour(); } },
  ...MODES.map(([v, t]) => h('option', { value: v, selected: v === state.mode }, t)));
  const traceBox = h('input', { type: 'checkbox', id: 'graphs-trace-inputs', checked: state.traceInputs,
    onchange: () => { state.traceInputs = traceBox.checked; updateTrace(); redraw(); } });
  const search = h('input.filter', { type: 'search', id: 'graphs-search', placeholder: 'Search name or op type',
    spellcheck: false, autocomplete: 'off', oninput: () => runSearch(), onkeydown: (e) => {
      if (e.key === 'Enter') results.querySelector('a')?.click();
    } });
  const results = h('div.search-results', { id: 'graphs-results' });
  const legend = h('div.graph-legend-box');
  const controls = h('div.graph-controls', null,
    h('div.section-title', null, 'Run'), runSelect,
    h('div.section-title', null, 'Graph'), graphSelect, stageSelect,
    h('div.section-title', null, 'Colour by'), modeSelect, legend,
    h('label.check', null, traceBox, ' Trace inputs of the selected op'),
    h('div.section-title', null, 'Search'), search, results);

  // ---- view ----------------------------------------------------------------------
  const layer = s('g', { class: 'viewport' });
  const svg = s('svg', { class: 'graph-svg', id: 'graph-svg', role: 'img', 'aria-label': 'Graph' }, defs(), layer);
  const viewport = new Viewport(svg, layer);
  const info = h('span.graph-info');
  const status = h('div.graph-status');
  const pane = h('aside.graph-pane', { id: 'graph-pane' }, h('div.muted', null, 'Click an op or a scope.'));
  const toolbar = h('div.toolbar.graph-toolbar', null, info,
    h('span.spacer'),
    h('button.small', { type: 'button', onclick: () => scene && viewport.fit(scene.width, scene.height) }, 'Fit'),
    h('button.small', { type: 'button', onclick: () => { open = new Set(); rerender('collapse'); } }, 'Close all scopes'),
    h('button.small', { type: 'button', id: 'graphs-export', onclick: exportSvg }, 'Export SVG'));
  const canvas = h('div.graph-canvas', null, svg, status);
  const view = h('div.page.graphs-page', null, toolbar, h('div.graph-main', null, canvas, pane));

  svg.addEventListener('click', onClick);
  svg.addEventListener('dblclick', onDoubleClick);

  function report(e) {
    status.textContent = e.message;
    status.className = 'graph-status error';
    view.dataset.loaded = 'true';
  }

  // ---- which graph ---------------------------------------------------------------
  function pickRun() {
    const runs = ctx.runs.selected();
    if (!runs.includes(state.run)) state.run = runs[0] ?? null;
    runSelect.replaceChildren(...runs.map((r) => h('option', { value: r, selected: r === state.run }, r)));
  }

  function fillGraphSelect() {
    const groups = list.functions.map((f) => h('optgroup', { label: f.function },
      ...f.concretes.map((c, i) => h('option', { value: optionKey(c), selected: optionKey(c) === state.pick, disabled: !c.has_graph },
        `${f.function} #${c.concrete_id ?? i + 1} · ${c.nodes_after} nodes${signatureHint(c.signature)}`))));
    const exported = list.exported.length ? [h('optgroup', { label: 'exported (trace_export, graph summaries)' },
      ...list.exported.flatMap((x) => x.steps.map((st) => h('option', { value: `x:${st}:${x.tag}`, selected: `x:${st}:${x.tag}` === state.pick },
        `${x.tag} @ step ${st}`))))] : [];
    graphSelect.replaceChildren(...groups, ...exported);
  }

  // The pick a link asks for, or the newest concrete of the function traced
  // first: a program's main step (fit's train step, not its test step,
  // which validation calls more often when the test set is the larger).
  function defaultPick(q) {
    if (q.get('trace')) return `t:${q.get('trace')}`;
    if (q.get('tag')) return `x:${q.get('step') ?? 0}:${q.get('tag')}`;
    const firstTrace = (f) => Math.min(...f.concretes.map((c) => c.trace_id));
    const first = list.functions.reduce((a, f) => (!a || firstTrace(f) < firstTrace(a) ? f : a), null);
    const fn = list.functions.find((f) => f.function === q.get('function')) ?? first;
    const usable = fn?.concretes.filter((c) => c.has_graph) ?? [];
    if (usable.length) return optionKey(usable.reduce((a, b) => (b.trace_id > a.trace_id ? b : a)));
    const x = list.exported[0];
    return x ? `x:${x.steps[x.steps.length - 1]}:${x.tag}` : null;
  }

  function fillStageSelect() {
    const c = state.pick?.startsWith('t:') ? list.functions.flatMap((f) => f.concretes).find((k) => optionKey(k) === state.pick) : null;
    if (!c) {
      stageSelect.replaceChildren(h('option', { value: 'exported' }, 'as exported'));
      stageSelect.disabled = true;
      return;
    }
    stageSelect.disabled = false;
    stageSelect.replaceChildren(
      h('option', { value: 'optimized', selected: state.stage !== 'traced' }, `after the graph passes (${c.nodes_after} nodes)`),
      h('option', { value: 'traced', selected: state.stage === 'traced' }, `as traced (${c.nodes_before} nodes)`));
  }

  async function reload(q = ctx.query()) {
    const mine = ++token;
    if (q.get('run')) state.run = q.get('run');
    pickRun();
    if (!state.run) return empty('No run selected');
    const l = await getJSON('graphs/list', { run: state.run });
    if (mine !== token || destroyed) return;
    list = l;
    if (q.has('trace') || q.has('function') || q.has('tag') || !state.pick) state.pick = defaultPick(q);
    if (q.get('stage')) state.stage = q.get('stage');
    fillGraphSelect();
    if (!state.pick) return empty(`Run ${state.run} has no traced function with a graph and no exported graph.`);
    await showPicked(q);
  }

  function empty(text) {
    layer.replaceChildren();
    info.textContent = '';
    status.textContent = text;
    status.className = 'graph-status';
    view.dataset.loaded = 'true';
  }

  function graphParams() {
    if (state.pick.startsWith('t:')) return { run: state.run, trace: state.pick.slice(2), stage: state.stage === 'traced' ? 'traced' : 'optimized' };
    const [, step, ...tag] = state.pick.split(':');
    return { run: state.run, tag: tag.join(':'), step };
  }

  async function showPicked(q = new URLSearchParams()) {
    const mine = ++token;
    fillStageSelect();
    const params = graphParams();
    const key = JSON.stringify(params);
    const t0 = performance.now();
    status.textContent = 'Loading the graph…';
    status.className = 'graph-status';
    view.dataset.state = 'busy';
    const data = await getJSON('graphs/graph', params);
    if (mine !== token || destroyed) return;
    const model = buildHierarchy(data.graph, data.profile || {});
    shown = { key, data, model, total: data.profile_total_us || 0 };
    layouts?.destroy();
    layouts = new Layouts(WORKER_URL);
    timing.layout = layouts.stats;
    open = new Set();
    selected = null;
    alertNode = null;
    traced = null;
    pane.replaceChildren(h('div.muted', null, 'Click an op or a scope.'));
    info.replaceChildren(...describe(data, model));
    recolour(false);
    const target = q.get('node') ? findNode(model, q.get('node')) : null;
    if (q.get('node') && !target) status.textContent = `No node named ${q.get('node')} in this graph.`;
    if (target) {
      if (q.get('alert')) alertNode = target;
      for (const g of ancestors(target)) if (g.parent) open.add(g.key);
    }
    await rerender('first', mine);
    if (mine !== token || destroyed) return;
    timing.firstPaintMs = performance.now() - t0;
    view.dataset.firstPaintMs = timing.firstPaintMs.toFixed(0);
    if (target) select(target, true);
    else viewport.fit(scene.width, scene.height);
    view.dataset.loaded = 'true';
    layouts.prefetch(model.root);
    syncHash();
  }

  function describe(data, model) {
    const parts = [h('b', null, data.function || data.tag || ''), ` · ${model.nodes.length.toLocaleString('en-US')} nodes in ${model.groups.size - 1} scopes`];
    if (data.passes?.length) parts.push(` · ${data.passes.filter((p) => p.ran).map((p) => p.pass).join(' → ')}`);
    if (data.arena_bytes) parts.push(` · arena ${(data.arena_bytes / 1024).toFixed(0)} KiB (naive ${(data.naive_bytes / 1024).toFixed(0)} KiB)`);
    if (data.profile_total_us) parts.push(` · profiled step ${(data.profile_total_us / 1000).toFixed(2)} ms`);
    return parts;
  }

  // ---- drawing -------------------------------------------------------------------
  // Lays out what is open (urgent: before any background layout), draws it,
  // and resolves once the browser has painted it.
  async function rerender(why, mine = token) {
    if (!shown) return;
    const t0 = performance.now();
    view.dataset.state = 'busy';
    const tree = await layouts.of(shown.model.root, open);
    if (mine !== token || destroyed) return;
    const t1 = performance.now();
    scene = assemble(tree);
    redraw();
    timing.phases = { layoutMs: t1 - t0, drawMs: performance.now() - t1 };
    await new Promise((r) => requestAnimationFrame(() => setTimeout(r, 0)));
    view.dataset.state = 'ready';
    view.dataset.open = String(open.size);
    if (why === 'toggle') {
      timing.expandMs.push(performance.now() - t0);
      view.dataset.lastExpandMs = timing.expandMs.at(-1).toFixed(0);
    }
    if (!status.classList.contains('error') && status.textContent === 'Loading the graph…') status.textContent = '';
  }

  function redraw() {
    if (!scene) return;
    draw(layer, scene, shown.colours.fill, marks());
    viewport.apply();
  }

  function recolour(again = true) {
    shown.colours = colourer(state.mode, shown.model, shown.total);
    legend.replaceChildren(shown.colours.legend());
    if (again) redraw();
  }

  function marks() {
    const tracing = state.traceInputs && traced;
    const alertScopes = new Set(alertNode ? ancestors(alertNode).map((g) => g.key) : []);
    return {
      item: (it) => {
        let c = '';
        if (it === selected) c += ' selected';
        if (it === alertNode) c += ' alert';
        if (tracing) c += (it.kind === 'node' ? traced.nodes.has(it) : traced.groups.has(it.key)) ? ' traced' : ' dim';
        return c;
      },
      edge: (e) => (tracing ? (e.base.some((b) => traced.nodes.has(b.u) && traced.nodes.has(b.v)) ? 'traced' : 'dim') : ''),
      alertIn: (g) => alertScopes.has(g.key),
    };
  }

  function updateTrace() {
    if (!state.traceInputs || selected?.kind !== 'node') { traced = null; return; }
    const nodes = transitiveInputs(selected);
    const groups = new Set();
    for (const n of nodes) for (const g of ancestors(n)) groups.add(g.key);
    traced = { nodes, groups };
  }

  // ---- interaction ---------------------------------------------------------------
  // Opening a scope brings it into view at a readable scale.
  async function toggle(g) {
    const opening = !open.has(g.key);
    if (opening) open.add(g.key); else open.delete(g.key);
    await rerender('toggle');
    const box = scene?.where.get(g.key);
    if (opening && box) viewport.centre({ ...box, h: Math.min(box.h, 500) }, 0.6);   // its top, if tall
    if (selected === g) showPane();
  }

  function select(item, centre = false) {
    selected = item;
    updateTrace();
    redraw();
    showPane();
    if (centre) {
      const box = scene.where.get(item.key);
      if (box) viewport.centre(box);
    }
    view.dataset.selected = item.kind === 'node' ? item.name : item.path;
    syncHash();
  }

  function showPane() {
    if (!selected) return;
    pane.replaceChildren(selected.kind === 'node'
      ? nodePane(selected, shown.total, (n) => reveal(n))
      : scopePane(selected, shown.total, (g) => toggle(g), open.has(selected.key)));
  }

  // Opens every scope around n, then selects and centres it.
  async function reveal(n) {
    let changed = false;
    for (const g of ancestors(n)) {
      if (g.parent && !open.has(g.key)) { open.add(g.key); changed = true; }
    }
    if (changed) await rerender('toggle');
    select(n, true);
  }

  function itemOf(el) {
    const key = el?.dataset.key;
    if (!key) return null;
    return key.startsWith('n:') ? shown.model.byName.get(key.slice(2)) : shown.model.groups.get(key.slice(2));
  }

  function onClick(ev) {
    if (viewport.dragged) { viewport.dragged = false; return; }
    const t = ev.target.closest('[data-toggle]');
    if (t) { toggle(shown.model.groups.get(t.dataset.toggle.slice(2))).catch(report); return; }
    const el = ev.target.closest('.node, .scope');
    const it = itemOf(el);
    if (it) select(it);
  }

  function onDoubleClick(ev) {
    const el = ev.target.closest('.scope.closed');
    const g = itemOf(el);
    if (g) toggle(g).catch(report);
  }

  function runSearch() {
    const text = search.value.trim().toLowerCase();
    if (!shown || !text) { results.replaceChildren(); return; }
    const hits = shown.model.nodes.filter((n) => n.name.toLowerCase().includes(text) || n.op.toLowerCase() === text);
    results.replaceChildren(h('div.muted', null, `${hits.length} match${hits.length === 1 ? '' : 'es'}`),
      ...hits.slice(0, 50).map((n) => h('a.search-hit', { href: '#', 'data-name': n.name,
        onclick: (e) => { e.preventDefault(); reveal(n).catch(report); } }, h('span', null, n.name), h('span.muted', null, ` ${n.op}`))));
  }

  function exportSvg() {
    if (!scene) return;
    const label = (shown.data.function || shown.data.tag || 'graph').replace(/[^\w.-]+/g, '_');
    download(`${label}-${shown.data.stage}.svg`, svgFile(svg, layer, scene), 'image/svg+xml');
  }

  // The address bar keeps what is shown, so it can be shared or bookmarked —
  // once the Graphs tab was chosen (or linked to). The shell may open it by
  // default while it is the only dashboard with data; writing the hash then
  // would pin it, and the live shell could not move to Scalars when the
  // first scalars arrive.
  function syncHash() {
    if (!location.hash.startsWith('#graphs')) return;
    const q = new URLSearchParams({ run: state.run });
    const p = graphParams();
    for (const k of ['trace', 'tag', 'step']) if (p[k] !== undefined) q.set(k, p[k]);
    if (p.trace && state.stage === 'traced') q.set('stage', 'traced');
    if (selected?.kind === 'node') q.set('node', selected.name);
    if (alertNode) q.set('alert', '1');
    history.replaceState(history.state, '', `${location.pathname}${location.search}#graphs?${q}`);
  }

  return {
    controls, view,
    refresh: () => reload().catch(report),
    // A new trace or graph adds to the list; what is shown stays as it is.
    async onData() {
      if (!state.run) return reload().catch(report);
      const l = await getJSON('graphs/list', { run: state.run }).catch(() => null);
      if (l && !destroyed) { list = l; fillGraphSelect(); }
    },
    onRuns() { pickRun(); },
    onQuery() { reload().catch(report); },
    destroy() { destroyed = true; layouts?.destroy(); },
  };
}

// " (with_grads=true)": what tells a function's concrete signatures apart.
function signatureHint(sig) {
  const m = /\(([^)]*)\)/.exec(sig || '');
  const statics = m ? m[1].split(', ').filter((a) => a.includes('=')) : [];
  return statics.length ? ` (${statics.join(', ')})` : '';
}
