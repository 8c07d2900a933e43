// The Distributions dashboard: per tag and run, the histograms over steps
// as nested percentile bands (TensorBoard's: min..max, 6.68..93.32,
// 15.87..84.13, 30.85..69.15, and the median line).

import { getJSON } from '../core/api.js';
import { alpha, autosize, tooltip, uPlot, xAxis, yAxis } from '../core/chart.js';
import { fmtValue, h, num, stepsLabel } from '../core/dom.js';
import { runLabel, tagPage } from '../core/tagpage.js';

export const name = 'distributions';

const HEIGHT = 220;
const MEDIAN = 4;   // index of the median among the nine percentiles

export function createPage(ctx) {
  return tagPage(ctx, { plugin: 'distributions', noun: 'histogram',
    block: (run, tag) => bandsBlock(ctx, run, tag), blockHeight: () => HEIGHT });
}

// One run's percentile bands of one tag: a chart made on the first fetch,
// given new data on later ones.
function bandsBlock(ctx, run, tag) {
  const box = h('div.chart');
  const info = h('span.muted');
  const el = h('div.run-block', { 'data-run': run }, runLabel(ctx, run, info), box);
  const tip = tooltip(el);
  let plot = null, stop = null;
  const load = async () => {
    const r = await getJSON('distributions/series', { run, tag, points: 500 });
    const n = r.step.length;
    const data = drawable([r.step, ...r.values.map((col) => col.map(num))]);
    el.dataset.steps = String(n);
    el.dataset.series = String(r.values.length);
    info.textContent = n ? stepsLabel(n, r.step[0], r.step[n - 1]) : '';
    // One step and many draw on different x scales: a change between
    // them makes the chart anew.
    if (plot && (n === 1) !== plot.oneStep) { plot.destroy(); stop?.(); plot = null; }
    if (plot) plot.setData(data);
    else if (n) {
      plot = bandsChart(box, data, { color: ctx.runs.color(run), percentiles: r.percentiles, run, tip, oneStep: n === 1 });
      plot.oneStep = n === 1;
      stop = autosize(plot, box, HEIGHT);
    }
    return n;
  };
  return { el, load, destroy: () => { plot?.destroy(); stop?.(); } };
}

// A single step has no width to fill a band over: it is drawn as a band
// one step wide, centred on the step (the same values at step ± 0.5).
function drawable(data) {
  if (data[0].length !== 1) return data;
  const s = data[0][0];
  return [[s - 0.5, s + 0.5], ...data.slice(1).map((col) => [col[0], col[0]])];
}

function bandsChart(box, data, { color, percentiles, run, tip, oneStep }) {
  const series = [{}, ...percentiles.map((p, k) => ({
    label: `p${p}`, points: { show: false }, spanGaps: true,
    stroke: k === MEDIAN ? color : 'transparent', width: k === MEDIAN ? 2 : 0,
  }))];
  // Outer to inner: the bands darken towards the median.
  const bands = [[9, 1], [8, 2], [7, 3], [6, 4]].map(([a, b], i) => ({ series: [a, b], fill: alpha(color, 0.1 + 0.08 * i) }));
  const plot = new uPlot({
    width: Math.max(300, box.clientWidth || 600), height: HEIGHT, series, bands,
    legend: { show: false },
    // One step: the x axis spans a step either side, with the step's tick alone.
    scales: { x: oneStep ? { time: false, range: (u, lo, hi) => [(lo + hi) / 2 - 1.5, (lo + hi) / 2 + 1.5] } : { time: false } },
    axes: [oneStep ? { ...xAxis('step'), splits: (u) => [(u.data[0][0] + u.data[0][1]) / 2] } : xAxis('step'), yAxis()],
    cursor: { drag: { x: true, y: false }, points: { show: false } },
    hooks: { setCursor: [(u) => showTip(u, tip, run, percentiles)] },
  }, data, box);
  plot.over.addEventListener('mouseleave', () => tip.hide());
  return plot;
}

// The step under the cursor and its percentiles, outer to inner.
function showTip(u, tip, run, percentiles) {
  const i = u.cursor.idx;
  if (i === null || i === undefined) { tip.hide(); return; }
  const step = u.oneStep ? u.data[0][0] + 0.5 : u.data[0][i];   // one step: drawn at step ± 0.5
  tip.show(u, [h('div.tip-row', null, h('span.tip-run', null, `${run} · step ${step}`)),
    ...[8, 6, 4, 2, 0].map((k) => h('div.tip-row', null, h('span.tip-num', null,
      `${k === MEDIAN ? 'median' : `p${percentiles[k]}`}: ${fmtValue(u.data[k + 1][i])}`)))]);
}
