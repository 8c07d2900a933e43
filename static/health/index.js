// The Health dashboard: what the engine's training-health checks found in
// a run — vanishing or exploding gradients, dead or saturated units, steps
// too large or too small, loss spikes — before any NaN. The alerts come
// first, most severe then earliest, each saying what it usually means and
// what to try, and linking to its layer's charts (the Scalars page
// filtered to health/<layer>/) and to the layer in the graph. Below them
// a heat map of one figure per layer over the steps (heatmap.js): rows
// are the layers, input side at the top, colour the figure on a log
// scale, so gradients that vanish on the way back show as a dark band.
// Live: both are fetched again when the store changes.

import { getJSON } from '../core/api.js';
import { counted, fmtValue, fmtWall, h, num } from '../core/dom.js';
import { HeatMap } from './heatmap.js';
import './health.css';

export const name = 'health';

// What the person chose, kept across tab switches; a link's query overrides it.
const state = { run: null, figure: null };

// The figures the engine writes, in the order the selector offers them.
const FIGURE_LABELS = {
  grad_norm: 'gradient norm',
  update_ratio: 'update / weight ratio',
  weight_norm: 'weight norm',
  dead_fraction: 'dead units (fraction)',
  saturated_fraction: 'saturated units (fraction)',
};

export function createPage(ctx) {
  let runsInfo = new Map();   // run -> /api/health/runs entry
  let alerts = null;          // the last /api/health/alerts answer
  let heat = null;            // the last /api/health/heatmap answer
  let token = 0;              // late answers of an older choice are dropped
  let destroyed = false;
  let pinned = takeQuery(ctx.query()) ? state.run : null;

  const runSelect = h('select.filter', { id: 'health-run', 'aria-label': 'Run',
    onchange: () => { state.run = runSelect.value; state.figure = null; reload().catch(report); } });
  const figureSelect = h('select.filter', { id: 'health-figure', 'aria-label': 'Figure',
    onchange: () => { state.figure = figureSelect.value; reloadHeat().catch(report); } });
  const controls = h('div', null,
    h('div.section-title', null, 'Run'), runSelect,
    h('div.section-title', null, 'Heat map'), figureSelect);

  const summary = h('span.muted.health-summary');
  const alertsBox = h('div.health-alerts-box');
  const map = new HeatMap();
  const heatTitle = h('div.card-title');
  const heatSub = h('span.card-sub');
  const heatCard = h('section.card.health-heat', null,
    h('div.card-head', null, heatTitle, heatSub), map.el);
  const view = h('div.page.health-page', null, h('div.toolbar', null, summary), alertsBox, heatCard);

  // ---- data ------------------------------------------------------------------------------
  function runChoices() {
    const selected = new Set(ctx.runs.selected());
    return [...runsInfo.keys()].filter((r) => selected.has(r) || r === pinned).sort();
  }

  async function loadRuns() {
    const r = await getJSON('health/runs');
    runsInfo = new Map(r.runs.map((x) => [x.run, x]));
    const choices = runChoices();
    if (!choices.includes(state.run)) {
      // The run with the most severe alerts first: the one to look at.
      const rank = (x) => [x.critical, x.warning, x.info];
      state.run = choices.slice().sort((a, b) => {
        const ra = rank(runsInfo.get(a)), rb = rank(runsInfo.get(b));
        for (let i = 0; i < 3; i++) if (ra[i] !== rb[i]) return rb[i] - ra[i];
        return a < b ? -1 : 1;
      })[0] ?? null;
      state.figure = null;
    }
    const label = (x) => {
      const i = runsInfo.get(x);
      return i.total ? `${x} (${counted(i.total, 'alert')})` : `${x} (healthy)`;
    };
    const sig = JSON.stringify([choices.map(label), state.run]);
    if (sig !== runSelect.dataset.sig) {
      runSelect.dataset.sig = sig;
      runSelect.replaceChildren(...choices.map((x) => h('option', { value: x, selected: x === state.run }, label(x))));
    }
    runSelect.disabled = !choices.length;
  }

  async function reloadAlerts(mine) {
    const a = state.run ? await getJSON('health/alerts', { run: state.run }) : null;
    if (mine !== token || destroyed) return false;
    alerts = a;
    return true;
  }

  async function reloadHeat(mine = ++token) {
    const params = { run: state.run, points: map.columnsWanted() };
    if (state.figure) params.figure = state.figure;
    const m = state.run ? await getJSON('health/heatmap', params) : null;
    if (mine !== token || destroyed) return;
    heat = m;
    if (m) state.figure = m.figure;
    renderHeat();
  }

  async function reload() {
    const mine = ++token;
    if (!await reloadAlerts(mine)) return;
    renderAlerts();
    await reloadHeat(mine);
    view.dataset.loaded = 'true';
  }

  // ---- alerts ----------------------------------------------------------------------------
  let alertsSig = null;   // what the list shows: a live update that changed nothing redraws nothing
  function renderAlerts() {
    if (destroyed) return;
    const sig = JSON.stringify([state.run, runsInfo.size, alerts]);
    if (sig === alertsSig) return;
    alertsSig = sig;
    if (!state.run) {
      summary.textContent = '';
      alertsBox.replaceChildren(h('div.empty', null, h('h2', null, 'No training health yet'),
        h('p', null, runsInfo.size
          ? 'None of the selected runs has health figures or alerts.'
          : 'Runs that train with a summary writer as the default record each layer\'s gradient norms, update ratios and dead units every few steps; what looks wrong is listed here, most severe first.')));
      view.dataset.alerts = '0';
      return;
    }
    const a = alerts;
    const parts = [['critical', a.critical], ['warning', a.warning], ['info', a.info]]
      .filter(([, n]) => n).map(([k, n]) => `${n} ${k}`);
    summary.textContent = a.total
      ? `${counted(a.total, 'alert')} in ${state.run} · ${parts.join(', ')}`
      : `No alerts in ${state.run}`;
    view.dataset.run = state.run;
    view.dataset.alerts = String(a.alerts.length);
    if (!a.alerts.length) {
      alertsBox.replaceChildren(h('section.card.health-none', null,
        h('div.health-ok', null, '✓ No alerts'),
        h('div.muted', null, 'Every check the engine ran on this run was within its bounds. The heat map below shows the figures it measured.')));
      return;
    }
    alertsBox.replaceChildren(h('section.card.health-alerts', null,
      h('div.card-head', null, h('div.card-title', null, 'Alerts, most severe first'),
        h('span.card-sub', null, a.alerts.length < a.total ? `showing ${a.alerts.length} of ${a.total}` : '')),
      h('ol.health-list', null, groupRepeats(a.alerts).map(alertItem))));
  }

  function alertItem(a) {
    const where = a.layer ? [a.layer, a.variable].filter(Boolean).join(' · ') : null;
    const when = a.step === null ? 'no step' : a.count > 1 ? `×${a.count} · steps ${a.step}–${a.lastStep}` : `step ${a.step}`;
    return h('li.health-alert', { className: `health-alert sev-${a.severity}`, 'data-id': a.id,
      'data-kind': a.kind, 'data-layer': a.layer, 'data-step': a.step ?? '', 'data-severity': a.severity,
      'data-count': a.count },
    h('div.alert-head', null,
      h('span.sev-badge', { className: `sev-badge sev-${a.severity}` }, a.severity),
      h('span.alert-kind', null, kindText(a.kind)),
      where ? h('span.alert-where', null, where) : h('span.alert-where.model', null, 'the model'),
      h('span.alert-step', { title: a.count > 1 ? `raised ${a.count} times; the first is shown` : null }, when)),
    a.message ? h('div.health-message', null, a.message) : null,
    h('div.alert-figures', null, figureFacts(a)),
    a.advice ? h('div.alert-advice', null, a.advice) : null,
    h('div.alert-links', null, links(a)));
  }

  function links(a) {
    if (!a.layer) return [];
    const charts = new URLSearchParams({ run: state.run, tags: `^health/${escapeRegex(a.layer)}/` });
    const graph = new URLSearchParams({ run: state.run, scope: a.layer });
    return [
      h('a.health-charts', { href: `#scalars?${charts}`, title: `The Scalars page: ${a.layer}'s health figures in ${state.run}` },
        `Charts of ${a.layer}`),
      h('a.health-graph', { href: `#graphs?${graph}`, title: `${a.layer} on the Graphs page` }, `${a.layer} in the graph`),
    ];
  }

  // ---- heat map --------------------------------------------------------------------------
  function renderHeat() {
    if (destroyed) return;
    const figures = heat?.figures ?? [];
    const sig = JSON.stringify([figures, state.figure]);
    if (sig !== figureSelect.dataset.sig) {
      figureSelect.dataset.sig = sig;
      figureSelect.replaceChildren(...figures.map((f) => h('option', { value: f, selected: f === state.figure }, FIGURE_LABELS[f] ?? f)));
    }
    figureSelect.disabled = !figures.length;
    heatCard.hidden = !heat || !heat.layers.length;
    if (heatCard.hidden) return;
    heatTitle.textContent = `${FIGURE_LABELS[heat.figure] ?? heat.figure} per layer`;
    const n = heat.steps.length;
    heatSub.textContent = `${counted(heat.layers.length, 'layer')} · ` +
      (n ? `steps ${heat.steps[0]}–${heat.steps_last[n - 1]}` : 'no steps') +
      (heat.downsampled ? ` · ${n} columns, the worst value of each` : '');
    map.show(heat, alerts?.run === state.run ? alerts.alerts : []);
  }

  const onResize = () => { if (heat && !heatCard.hidden) map.show(heat, alerts?.alerts ?? []); };
  window.addEventListener('resize', onResize);

  return {
    controls, view,
    async refresh() { await loadRuns(); await reload(); },
    onRuns() {
      pinned = null;
      loadRuns().then(reload).catch(report);
    },
    async onData() {
      await loadRuns();
      await reload();
    },
    onQuery() {
      if (takeQuery(ctx.query())) { pinned = state.run; loadRuns().then(reload).catch(report); }
    },
    destroy() { destroyed = true; map.destroy(); window.removeEventListener('resize', onResize); },
  };
}

// `#health?run=R&figure=F`: what a link asks for; returns whether it asked.
function takeQuery(q) {
  if (!q.has('run')) return false;
  state.run = q.get('run');
  state.figure = q.get('figure');
  return true;
}

function report(e) { console.error(e); }

function kindText(kind) {
  const t = kind.replace(/_/g, ' ');
  return t.charAt(0).toUpperCase() + t.slice(1);
}

function escapeRegex(s) { return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'); }

// The value that tripped the check against its bound, then every figure
// the check used.
function figureFacts(a) {
  const out = [];
  const fact = (k, v) => out.push(h('span.fact', { 'data-key': k }, h('span.fact-key', null, k), h('span.fact-value', null, v)));
  fact('value', fmtValue(num(a.value)));
  fact('threshold', fmtValue(num(a.threshold)));
  for (const [k, v] of Object.entries(a.figures ?? {})) {
    fact(k.replace(/_/g, ' '), typeof v === 'number' || typeof v === 'string' && /^(NaN|-?Infinity)$/.test(v)
      ? fmtValue(num(v)) : typeof v === 'string' ? v : JSON.stringify(v));
  }
  fact('time', fmtWall(a.wall));
  return out;
}

// A check that trips at every interval raises the same alert again and
// again: one row per (severity, kind, layer, variable), at the place of
// its first (the API's order), saying how many and until when.
function groupRepeats(alerts) {
  const rows = new Map();
  for (const a of alerts) {
    const key = JSON.stringify([a.severity, a.kind, a.layer, a.variable]);
    const row = rows.get(key);
    if (!row) { rows.set(key, { ...a, count: 1, lastStep: a.step }); continue; }
    row.count++;
    if (a.step !== null && (row.lastStep === null || a.step > row.lastStep)) row.lastStep = a.step;
  }
  return [...rows.values()];
}
