// The HParams dashboard: which settings won. One request (/api/hparams)
// gives the experiment and a row per run; the page shows them three ways
// that share one set of filters (model.js): the table (table.js), parallel
// coordinates with brushes (parcoords.js) and the scatter-plot matrix of
// each hparam against each metric (scatter.js). A run's box in the table
// is its box in the shared run selector; "Select shown runs" makes the
// runs left by the filters the selection of every page. Live: the table
// is fetched again whenever the store changes.

import { getJSON } from '../core/api.js';
import { counted, h } from '../core/dom.js';
import { Model } from './model.js';
import { ParallelCoordinates } from './parcoords.js';
import { ScatterMatrix } from './scatter.js';
import { Table } from './table.js';
import './hparams.css';

export const name = 'hparams';

const state = { hidden: new Set(), colorBy: null, mode: 'final', step: 0 };   // kept across tab switches

export function createPage(ctx) {
  const model = new Model();
  model.mode = state.mode;
  let destroyed = false;
  const t0 = performance.now();

  const columns = () => model.columns.filter((c) => !state.hidden.has(c.key));
  const colorBy = () => (model.column(state.colorBy) ? state.colorBy : null);
  const runColor = (run) => ctx.runs.color(run);

  const table = new Table(model, {
    runs: ctx.runs, hidden: state.hidden, onFilter: () => filtered(),
    openScalars: (run) => { ctx.runs.setSelected([run]); location.hash = 'scalars'; },
  });
  const parcoords = new ParallelCoordinates(model, { columns, colorBy, runColor, onBrush: () => filtered() });
  const scatter = new ScatterMatrix(model, { columns, colorBy, runColor });

  // ---- sidebar ----
  const modeRadios = h('div.radios', null, ['final', 'best', 'step'].map((m) => h('label.radio', null,
    h('input', { type: 'radio', name: 'hp-mode', value: m, checked: state.mode === m, 'data-mode': m,
      onchange: () => { state.mode = model.mode = m; reloadOrRebuild(); } }), m === 'step' ? 'at step' : m)));
  const stepInput = h('input.filter.hp-step', { type: 'number', id: 'hp-step', value: state.step, min: 0,
    title: 'With "at step": each metric\'s last value at or before this step',
    onchange: () => { state.step = Math.trunc(+stepInput.value || 0); if (state.mode === 'step') reloadOrRebuild(); } });
  // The value at a step comes from the server; final and best are in hand.
  function reloadOrRebuild() {
    model.step = state.step;
    if (state.mode === 'step') load().catch(() => {});
    else { model.rebuild(); redraw(true); }
  }
  const colorSelect = h('select.hp-color', { id: 'hp-color', onchange: () => { state.colorBy = colorSelect.value; redraw(false); } });
  const columnList = h('div.hp-columns');
  const controls = h('div', null,
    h('div.section-title', null, 'Metric value'), modeRadios, stepInput,
    h('div.section-title', null, 'Colour lines by'), colorSelect,
    h('div.section-title', null, 'Columns'), columnList);

  function sidebar() {
    colorSelect.replaceChildren(...model.columns.filter((c) => c.kind === 'metric').map((c) =>
      h('option', { value: c.key, selected: c.key === state.colorBy }, c.label)), h('option', { value: '', selected: !colorBy() }, 'run colour'));
    columnList.replaceChildren(...model.columns.map((c) => h('label.check', null,
      h('input', { type: 'checkbox', checked: !state.hidden.has(c.key), 'data-key': c.key,
        onchange: (e) => { if (e.target.checked) state.hidden.delete(c.key); else state.hidden.add(c.key); redraw(true); } }),
      c.label)));
  }

  // ---- the page ----
  const summary = h('span.muted.hp-summary');
  const selectShown = h('button.small', { type: 'button', id: 'hp-select-shown',
    title: 'Make the runs the filters and brushes leave the selection of every page',
    onclick: () => ctx.runs.setSelected(model.shown().map((r) => r.name)) }, 'Select shown runs');
  const clear = h('button.small', { type: 'button', id: 'hp-clear',
    onclick: () => { model.filters.clear(); model.brushes.clear(); table.shape = null; redraw(true); } }, 'Clear filters');
  const section = (title, sub, body, id) => h('section.card.hp-section', { 'data-section': id },
    h('div.card-head', null, h('span.card-title', null, title), h('span.card-sub', null, sub)), body);
  const content = h('div.hp-content');
  const view = h('div.page.hp-page', null, h('div.toolbar', null, summary, selectShown, clear), content);

  function layout() {
    if (!model.runs.length) {
      content.replaceChildren(h('div.empty', null, 'No run has recorded hyperparameters yet (gb_summary_hparam_num, or fit with a summary callback).'));
      return;
    }
    content.replaceChildren(
      section('Table', 'click a header to sort · type under it to filter', table.el, 'table'),
      section('Parallel coordinates', 'drag along an axis to brush · click an axis to clear its brush', parcoords.el, 'parcoords'),
      section('Scatter-plot matrix', 'each hyperparameter against each metric', h('div.hp-scroll', null, scatter.el), 'scatter'));
  }

  function count() {
    const n = model.shown().length;
    summary.textContent = `${n} of ${counted(model.runs.length, 'run')} shown`;
    view.dataset.shown = String(n);
  }

  // A filter or brush moved: rows show or hide, the charts redraw. How
  // long that took, layout included, is kept for the page's bench.
  function filtered() {
    const t0 = performance.now();
    table.applyFilter();
    parcoords.draw();
    scatter.draw();
    count();
    void view.offsetHeight;   // the layout the hidden rows cause, now
    (window.__glassbox.hparamsFilterMs ??= []).push(performance.now() - t0);
  }

  function redraw(rows) {
    if (rows) table.render();
    else table.applyFilter();
    parcoords.draw();
    scatter.draw();
    count();
  }

  async function load() {
    const data = await getJSON('hparams', state.mode === 'step' ? { step: state.step } : {});
    if (destroyed) return;
    const hadRuns = model.runs.length > 0;
    const changed = model.load(data);
    if (!state.colorBy && model.columns.some((c) => c.kind === 'metric'))
      state.colorBy = (model.columns.find((c) => c.kind === 'metric' && c.higherIsBetter) ?? model.columns.find((c) => c.kind === 'metric')).key;
    if (changed || !hadRuns) { sidebar(); layout(); }
    redraw(true);
    if (!view.dataset.loaded) {
      void view.offsetHeight;
      view.dataset.loaded = 'true';
      // Since the page was made, and since navigation began (the bench's figures).
      window.__glassbox.hparamsFirstPaintMs = performance.now() - t0;
      window.__glassbox.hparamsPaintedAt = performance.now();
    }
  }

  window.__glassbox.hparams = { model, filtered, table, parcoords, scatter };
  return {
    controls, view,
    refresh: load,
    onData: load,
    onRuns() { table.applyFilter(); },
    destroy() { destroyed = true; parcoords.destroy(); },
  };
}
