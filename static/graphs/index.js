// The Graphs dashboard: every traced concrete function's graph (after the
// graph passes, or as traced) and every exported graph, drawn as name
// scopes that open and close, laid out one scope at a time in a Web Worker
// (layout.js) so a graph of any size opens at once and never freezes the
// page. Click an op for its pane; colour by op type, device, compute time
// or output memory; trace what feeds an op; search by name or op type;
// export the view as SVG; compare the graph as traced with the graph
// after the passes, side by side, with what the passes changed marked
// (diff.js). A link can open a graph at a node:
//   #graphs?run=R&trace=T            a traced concrete function
//   #graphs?run=R&function=F&node=N  F's newest one, revealing node N
//   (no function: the newest of the function traced first)
//   #graphs?run=R&tag=G&step=S       an exported graph
//   #graphs?run=R&scope=L            the scope of layer L opened and selected
//                                    (the Health page's alerts link so)
// (&alert=1 marks the node as the one a numerics alert names.)

import { getJSON } from '../core/api.js';
import { counted, download, h } from '../core/dom.js';
import { MODES, colourer, fmtBytes } from './colour.js';
import { CHANGES, changesPerScope, stageDiff } from './diff.js';
import { ancestors, findNode, findScope, transitiveInputs } from './hierarchy.js';
import { nodePane, scopePane } from './pane.js';
import { svgFile } from './export.js';
import { GraphView } from './view.js';
import './graphs.css';

export const name = 'graphs';

const WORKER_URL = '/static/graphs_layout.worker.js';

// Kept across tab switches: what the person chose.
const state = { run: null, runChosen: false, pick: null, stage: 'optimized', mode: 'op', traceInputs: false };

const optionKey = (c) => `t:${c.trace_id}`;

// The pick a link asks for, or the newest concrete of the function traced
// first: a program's main step (fit's train step, not its test step,
// which validation calls more often when the test set is the larger).
// null when the list has no graph.
function defaultPick(list, q) {
  if (q.get('trace')) return `t:${q.get('trace')}`;
  if (q.get('tag')) return `x:${q.get('step') ?? 0}:${q.get('tag')}`;
  const firstTrace = (f) => Math.min(...f.concretes.map((c) => c.trace_id));
  const withGraph = list.functions.filter((f) => f.concretes.some((c) => c.has_graph));
  const first = withGraph.reduce((a, f) => (!a || firstTrace(f) < firstTrace(a) ? f : a), null);
  const fn = withGraph.find((f) => f.function === q.get('function')) ?? first;
  const usable = fn?.concretes.filter((c) => c.has_graph) ?? [];
  if (usable.length) return optionKey(usable.reduce((a, b) => (b.trace_id > a.trace_id ? b : a)));
  const x = list.exported[0];
  return x ? `x:${x.steps[x.steps.length - 1]}:${x.tag}` : null;
}

export function createPage(ctx) {
  let destroyed = false;
  let token = 0;
  let list = null;          // /api/graphs/list of state.run
  let open = new Set();     // opened scope keys, shared by the views
  let selectedKey = null;   // the selected node's or scope's key
  let alertName = null;     // the node a numerics alert names
  let diff = null;          // compare: stageDiff(traced, optimized)
  let shownTrace = null;    // what the views show: the pick, for keeping open scopes
  const timing = { firstPaintMs: null, expandMs: [] };
  window.__glassbox.graphs = timing;

  // ---- controls ------------------------------------------------------------------
  const runSelect = h('select.filter', { id: 'graphs-run', 'aria-label': 'Run',
    onchange: () => { state.run = runSelect.value; state.runChosen = true; state.pick = null; reload(new URLSearchParams()).catch(report); } });
  const graphSelect = h('select.filter', { id: 'graphs-pick', 'aria-label': 'Graph',
    onchange: () => { state.pick = graphSelect.value; showPicked().catch(report); } });
  const stageSelect = h('select.filter', { id: 'graphs-stage', 'aria-label': 'Stage',
    onchange: () => { state.stage = stageSelect.value; showPicked().catch(report); } });
  const modeSelect = h('select.filter', { id: 'graphs-colour', 'aria-label': 'Colour by',
    onchange: () => { state.mode = modeSelect.value; recolour(); } },
  ...MODES.map(([v, t]) => h('option', { value: v, selected: v === state.mode }, t)));
  const traceBox = h('input', { type: 'checkbox', id: 'graphs-trace-inputs', checked: state.traceInputs,
    onchange: () => { state.traceInputs = traceBox.checked; restyle(); } });
  const search = h('input.filter', { type: 'search', id: 'graphs-search', placeholder: 'Search name or op type',
    spellcheck: false, autocomplete: 'off', oninput: () => runSearch(), onkeydown: (e) => {
      if (e.key === 'Enter') results.querySelector('a')?.click();
    } });
  const results = h('div.search-results', { id: 'graphs-results' });
  const legend = h('div.graph-legend-box');
  const diffLegend = h('div.graph-diff-legend', { id: 'graphs-diff' });
  const controls = h('div.graph-controls', null,
    h('div.section-title', null, 'Run'), runSelect,
    h('div.section-title', null, 'Graph'), graphSelect, stageSelect, diffLegend,
    h('div.section-title', null, 'Colour by'), modeSelect, legend,
    h('label.check', null, traceBox, ' Trace inputs of the selected op'),
    h('div.section-title', null, 'Search'), search, results);

  // ---- views ---------------------------------------------------------------------
  const on = { click: onClick, dblclick: onDoubleClick, keydown: onKey };
  const main = new GraphView(WORKER_URL, on);
  let second = null;        // the optimized stage beside main's traced one
  const views = () => (second ? [main, second] : [main]);
  const info = h('span.graph-info');
  const pane = h('aside.graph-pane', { id: 'graph-pane' }, h('div.muted', null, 'Click an op or a scope.'));
  const toolbar = h('div.toolbar.graph-toolbar', null, info,
    h('span.spacer'),
    h('button.small', { type: 'button', onclick: () => views().forEach((v) => v.fit()) }, 'Fit'),
    h('button.small', { type: 'button', onclick: () => { open = new Set(); rerender('collapse').catch(report); } }, 'Close all scopes'),
    h('button.small', { type: 'button', id: 'graphs-export', onclick: exportSvg }, 'Export SVG'));
  const canvases = h('div.graph-canvases', null, main.el);
  const view = h('div.page.graphs-page', null, toolbar, h('div.graph-main', null, canvases, pane));

  function setStatus(text, error = false) {
    main.status.textContent = text;
    main.status.className = `graph-status${error ? ' error' : ''}`;
  }

  function report(e) {
    setStatus(e.message, true);
    view.dataset.loaded = 'true';
  }

  // ---- which graph ---------------------------------------------------------------
  function pickRun(runs) {
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

  function concreteOfPick() {
    return state.pick?.startsWith('t:') ? list.functions.flatMap((f) => f.concretes).find((k) => optionKey(k) === state.pick) : null;
  }

  function fillStageSelect() {
    const c = concreteOfPick();
    if (!c) {
      stageSelect.replaceChildren(h('option', { value: 'exported' }, 'as exported'));
      stageSelect.disabled = true;
      return;
    }
    stageSelect.disabled = false;
    stageSelect.replaceChildren(
      h('option', { value: 'optimized', selected: state.stage === 'optimized' }, `after the graph passes (${c.nodes_after} nodes)`),
      h('option', { value: 'traced', selected: state.stage === 'traced' }, `as traced (${c.nodes_before} nodes)`),
      h('option', { value: 'compare', selected: state.stage === 'compare' }, 'both, side by side: what the passes changed'));
  }

  // The run a link names; else the person's choice; else the first run
  // that has a graph to show (not merely the first run).
  async function chooseRun(q, mine) {
    const runs = ctx.runs.selected();
    if (q.get('run')) {
      if (q.get('run') !== state.run) state.pick = null;   // a pick names a trace of its run
      state.run = q.get('run');
      state.runChosen = true;
    }
    if (state.runChosen && runs.includes(state.run)) return pickRun(runs);
    for (const r of runs) {
      const l = await getJSON('graphs/list', { run: r });
      if (mine !== token || destroyed) return null;
      if (defaultPick(l, q)) { state.run = r; pickRun(runs); return l; }
    }
    return pickRun(runs);
  }

  async function reload(q = ctx.query()) {
    const mine = ++token;
    const found = await chooseRun(q, mine);
    if (mine !== token || destroyed) return;
    if (!state.run) return empty('No run selected');
    const l = found ?? await getJSON('graphs/list', { run: state.run });
    if (mine !== token || destroyed) return;
    list = l;
    if (q.has('trace') || q.has('function') || q.has('tag') || !state.pick) state.pick = defaultPick(list, q);
    if (q.get('stage')) state.stage = q.get('stage');
    fillGraphSelect();
    if (!state.pick) return empty(`Run ${state.run} has no traced function with a graph and no exported graph.`);
    await showPicked(q);
  }

  function empty(text) {
    for (const v of views()) v.layer.replaceChildren();
    info.textContent = '';
    setStatus(text);
    view.dataset.loaded = 'true';
  }

  function graphParams(stage = state.stage) {
    if (state.pick.startsWith('t:')) return { run: state.run, trace: state.pick.slice(2), stage: stage === 'traced' ? 'traced' : 'optimized' };
    const [, step, ...tag] = state.pick.split(':');
    return { run: state.run, tag: tag.join(':'), step };
  }

  const comparing = () => state.stage === 'compare' && state.pick?.startsWith('t:');

  // Two views to compare the stages (traced left, optimized right), or one.
  function arrangeViews() {
    if (comparing() && !second) {
      second = new GraphView(WORKER_URL, on, 'graph-svg-optimized');
      canvases.append(second.el);
    } else if (!comparing() && second) {
      second.destroy();
      second.el.remove();
      second = null;
    }
    canvases.classList.toggle('compare', Boolean(second));
    main.title.textContent = second ? 'as traced' : '';
    if (second) second.title.textContent = 'after the graph passes';
  }

  async function showPicked(q = new URLSearchParams()) {
    const mine = ++token;
    fillStageSelect();
    arrangeViews();
    const t0 = performance.now();
    setStatus('Loading the graph…');
    view.dataset.state = 'busy';
    const stages = second ? ['traced', 'optimized'] : [state.stage];
    const datas = await Promise.all(stages.map((st) => getJSON('graphs/graph', graphParams(st))));
    if (mine !== token || destroyed) return;
    views().forEach((v, i) => v.show(datas[i]));
    // The same function in another stage keeps the scopes that were open.
    if (shownTrace !== state.pick) {
      open = new Set();
      selectedKey = null;
    }
    shownTrace = state.pick;
    alertName = null;
    diff = second ? stageDiff(main.model, second.model) : null;
    pane.replaceChildren(h('div.muted', null, 'Click an op or a scope.'));
    info.replaceChildren(...describe(views().at(-1)));
    fillDiffLegend();
    recolour(false);
    const target = q.get('node') ? findNode(main.model, q.get('node')) : null;
    if (q.get('node') && !target) setStatus(`No node named ${q.get('node')} in this graph.`);
    if (target) {
      if (q.get('alert')) alertName = target.name;
      for (const g of ancestors(target)) if (g.parent) open.add(g.key);
    }
    const scope = !target && q.get('scope') ? findScope(main.model, q.get('scope')) : null;
    if (q.get('scope') && !target && !scope) setStatus(`No scope named ${q.get('scope')} in this graph.`);
    if (scope) for (const g of [...ancestors(scope), scope]) if (g.parent) open.add(g.key);
    await rerender('first', mine);
    if (mine !== token || destroyed) return;
    timing.firstPaintMs = performance.now() - t0;
    view.dataset.firstPaintMs = timing.firstPaintMs.toFixed(0);
    views().forEach((v) => v.fit());
    if (target) select(target, true);
    else if (scope) select(scope, true);
    else if (selectedKey && itemIn(main, selectedKey)) select(itemIn(main, selectedKey), true);
    view.dataset.loaded = 'true';
    for (const v of views()) v.layouts.prefetch(v.model.root);
    syncHash();
  }

  // The header: what the graph is and the engine's figures for it — the
  // planned arena, and its ops' time per profiled step, the mean of the
  // steps timed: the kernels alone, so less than the Profile page's step,
  // which counts everything between two step marks.
  function describe(v) {
    const { data, model } = v;
    const scopes = [...model.groups.values()].filter((g) => g.parent && !g.series && !g.part).length;
    const parts = [h('b', null, data.function || data.tag || ''), ` · ${counted(model.nodes.length, 'node')} in ${counted(scopes, 'scope')}`];
    if (data.passes?.length) parts.push(` · ${data.passes.filter((p) => p.ran).map((p) => p.pass).join(' → ')}`);
    // The plan for the shapes it ran with (a graph with -1 dims plans the
    // batch-sized values per call shape); an older trace has only the part
    // every shape shares.
    const known = data.call_arena_bytes >= 0;
    const arena = known ? data.call_arena_bytes : data.arena_bytes, naive = known ? data.call_naive_bytes : data.naive_bytes;
    if (arena >= 0 && naive > 0) {
      parts.push(h('span.graph-arena', { 'data-arena': arena, 'data-naive': naive },
        ` · arena ${fmtBytes(arena)} (naive ${fmtBytes(naive)})${data.call_shapes ? ` for ${data.call_shapes}` : ''}`));
    }
    if (model.steps) {
      parts.push(h('span.graph-step', { 'data-step-us': model.stepUs.toFixed(3), 'data-steps': model.steps },
        ` · ops ${(model.stepUs / 1000).toFixed(2)} ms per profiled step (mean of ${counted(model.steps, 'step')})`));
    }
    return parts;
  }

  function fillDiffLegend() {
    if (!diff) { diffLegend.replaceChildren(); return; }
    diffLegend.replaceChildren(h('div.graph-legend-title', null, 'What the passes changed'),
      ...CHANGES.map((c) => h('div.graph-legend-row', { 'data-change': c }, h('span.graph-diff-swatch', { class: `diff-${c}` }), `${c} ${diff.counts[c]}`)));
  }

  // ---- drawing -------------------------------------------------------------------
  // Lays out what is open in every view, draws it, and resolves once the
  // browser has painted it.
  async function rerender(why, mine = token) {
    if (!main.model) return;
    const t0 = performance.now();
    view.dataset.state = 'busy';
    await Promise.all(views().map((v) => v.layout(open)));
    if (mine !== token || destroyed) return;
    for (const v of views()) v.paint(v.colours.fill, marks(v));
    timing.layout = main.layouts.stats;
    await new Promise((r) => requestAnimationFrame(() => setTimeout(r, 0)));
    view.dataset.state = 'ready';
    view.dataset.open = String(open.size);
    if (why === 'toggle') {
      timing.expandMs.push(performance.now() - t0);
      view.dataset.lastExpandMs = timing.expandMs.at(-1).toFixed(0);
    }
    if (main.status.textContent === 'Loading the graph…') setStatus('');
  }

  function recolour(again = true) {
    for (const v of views()) v.colours = colourer(state.mode, v.model, v.model.stepUs);
    legend.replaceChildren(main.colours.legend());
    if (again) for (const v of views()) v.paint(v.colours.fill, marks(v));
  }

  function restyle() {
    for (const v of views()) v.restyle(marks(v));
  }

  function itemIn(v, key) {
    if (!v.model || !key) return null;
    return key.startsWith('n:') ? v.model.byName.get(key.slice(2)) : v.model.groups.get(key.slice(2));
  }

  // What feeds the selected op, in view v.
  function tracedIn(v) {
    const n = state.traceInputs && selectedKey?.startsWith('n:') ? itemIn(v, selectedKey) : null;
    if (!n) return null;
    const nodes = transitiveInputs(n);
    const groups = new Set();
    for (const x of nodes) for (const g of ancestors(x)) groups.add(g.key);
    return { nodes, groups };
  }

  function marks(v) {
    const traced = tracedIn(v);
    const alertScopes = new Set();
    const alertNode = alertName ? findNode(v.model, alertName) : null;
    if (alertNode) for (const g of ancestors(alertNode)) alertScopes.add(g.key);
    const changes = diff ? (v === main ? diff.before : diff.after) : null;
    const perScope = changes ? changesPerScope(v.model, changes) : null;
    return {
      item: (it) => {
        let c = '';
        if (it.key === selectedKey) c += ' selected';
        if (it === alertNode) c += ' alert';
        if (traced) c += (it.kind === 'node' ? traced.nodes.has(it) : traced.groups.has(it.key)) ? ' traced' : ' dim';
        const change = it.kind === 'node' && changes?.get(it.name);
        if (change) c += ` diff-${change}`;
        return c;
      },
      edge: (e) => (traced ? (e.base.some((b) => traced.nodes.has(b.u) && traced.nodes.has(b.v)) ? 'traced' : 'dim') : ''),
      alertIn: (g) => alertScopes.has(g.key),
      changesIn: (g) => (perScope?.get(g.key) ? `${perScope.get(g.key)} changed` : ''),
    };
  }

  // ---- interaction ---------------------------------------------------------------
  // Opening a scope brings it into view at a readable scale in the view it
  // was opened in; the keyboard focus stays on it.
  async function toggle(g, v = main, focus = false) {
    const opening = !open.has(g.key);
    if (opening) open.add(g.key); else open.delete(g.key);
    await rerender('toggle');
    const box = v.scene?.where.get(g.key);
    if (opening && box) v.viewport.centre({ ...box, h: Math.min(box.h, 500) }, 0.6);   // its top, if tall
    if (focus) v.layer.querySelector(`.scope[data-key="${CSS.escape(g.key)}"]`)?.focus();
    if (selectedKey === g.key) showPane();
  }

  // centre: bring it to the middle of every view that shows it.
  function select(item, centre = false) {
    selectedKey = item.key;
    restyle();
    showPane();
    if (centre) {
      for (const v of views()) {
        const box = v.scene?.where.get(item.key);
        if (box) v.viewport.centre(box);
      }
    }
    view.dataset.selected = item.kind === 'node' ? item.name : item.path;
    syncHash();
  }

  function showPane() {
    const v = views().find((x) => itemIn(x, selectedKey)) ?? main;
    const it = itemIn(v, selectedKey);
    if (!it) return;
    pane.replaceChildren(it.kind === 'node'
      ? nodePane(it, v.model.stepUs, (n) => reveal(n))
      : scopePane(it, v.model.stepUs, (g) => toggle(g), open.has(it.key)));
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

  function onClick(v, ev) {
    if (v.viewport.dragged) { v.viewport.dragged = false; return; }
    const t = ev.target.closest('[data-toggle]');
    if (t) { toggle(v.model.groups.get(t.dataset.toggle.slice(2)), v).catch(report); return; }
    const it = v.itemOf(ev.target.closest('.node, .scope'));
    if (it) select(it);
  }

  // A double-click on a closed scope opens it; on an open scope's title
  // bar, closes it. (A click on "+" already toggled.)
  function onDoubleClick(v, ev) {
    if (ev.target.closest('[data-toggle]')) return;
    const closed = ev.target.closest('.scope.closed');
    const bar = ev.target.closest('.scope-bar') && ev.target.closest('.scope.open');
    const g = v.itemOf(closed ?? bar);
    if (g) toggle(g, v).catch(report);
  }

  // Enter (or space) on a focused scope opens or closes it.
  function onKey(v, ev) {
    if (ev.key !== 'Enter' && ev.key !== ' ') return;
    const g = v.itemOf(ev.target.closest?.('.scope'));
    if (!g) return;
    ev.preventDefault();
    toggle(g, v, true).catch(report);
  }

  function runSearch() {
    const text = search.value.trim().toLowerCase();
    if (!main.model || !text) { results.replaceChildren(); return; }
    const hits = main.model.nodes.filter((n) => n.name.toLowerCase().includes(text) || n.op.toLowerCase() === text);
    results.replaceChildren(h('div.muted', null, counted(hits.length, 'match', 'matches')),
      ...hits.slice(0, 50).map((n) => h('a.search-hit', { href: '#', 'data-name': n.name,
        onclick: (e) => { e.preventDefault(); reveal(n).catch(report); } }, h('span', null, n.name), h('span.muted', null, ` ${n.op}`))));
  }

  function exportSvg() {
    if (!main.scene) return;
    const label = (main.data.function || main.data.tag || 'graph').replace(/[^\w.-]+/g, '_');
    download(`${label}-${main.data.stage}.svg`, svgFile(main.svg, main.layer, main.scene), 'image/svg+xml');
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
    if (p.trace && state.stage !== 'optimized') q.set('stage', state.stage);
    if (selectedKey?.startsWith('n:')) q.set('node', selectedKey.slice(2));
    if (alertName) q.set('alert', '1');
    history.replaceState(history.state, '', `${location.pathname}${location.search}#graphs?${q}`);
  }

  return {
    controls, view,
    refresh: () => reload().catch(report),
    // A new trace or graph adds to the list; what is shown stays as it is.
    async onData() {
      if (!state.run || !list) return reload().catch(report);
      const l = await getJSON('graphs/list', { run: state.run }).catch(() => null);
      if (l && !destroyed) { list = l; fillGraphSelect(); }
    },
    onRuns() { if (list) pickRun(ctx.runs.selected()); },
    onQuery() { reload().catch(report); },
    destroy() { destroyed = true; for (const v of views()) v.destroy(); },
  };
}

// " (with_grads=true)": what tells a function's concrete signatures apart.
function signatureHint(sig) {
  const m = /\(([^)]*)\)/.exec(sig || '');
  const statics = m ? m[1].split(', ').filter((a) => a.includes('=')) : [];
  return statics.length ? ` (${statics.join(', ')})` : '';
}
