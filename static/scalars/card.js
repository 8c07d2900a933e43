// card.js — one Scalars chart card: every drawn run of one tag overlaid in
// its colour (plot.js says what is drawn), NaN/Inf markers (markers.js), a
// tooltip, drag to zoom (the range re-fetched at full resolution), double
// click or Reset to unzoom, CSV/JSON downloads, and a legend with each
// run's last smoothed value and its numerics alerts. The uPlot chart is
// rebuilt only when its series or axes change; otherwise it gets new data.
//
// env: runs() the runs to draw, in order; series(run, tag) the series held
// (or null); colorOf(run); alertsOf(run) the run's numerics alerts (or
// undefined).

import { pooled } from '../core/api.js';
import { autosize, tooltip, uPlot, xAxis, yAxis } from '../core/chart.js';
import { fmtValue, h } from '../core/dom.js';
import '../core/blockstate.css';
import './card.css';
import { alertLink } from '../core/numerics-link.js';
import { exportScalars } from './export.js';
import { collectMarkers, drawMarkers, followMarkerLinks } from './markers.js';
import { buildPlot, xValues } from './plot.js';
import { fetchSeries, POINTS } from './series.js';
import { settings } from './settings.js';
import { tipRows } from './tooltip.js';

const HEIGHT = 260;   // the chart's
// The card's, whatever it holds (a long legend scrolls inside it): the
// card window places cards from it without measuring any.
export const CARD_HEIGHT = 352;

export class ScalarCard {
  constructor(tag, env) {
    this.tag = tag;
    this.env = env;
    this.zoom = null;        // {min, max} of x while zoomed
    this.zoomData = null;    // run -> series of the zoomed range
    this.plot = null;
    this.shape = '';         // what the chart was built for (see render)
    this.stopResize = null;
    this.markers = [];
    this.drawn = [];
    this.yRange = null;
    // The final height from the start: what is "near the screen" must not
    // change as charts appear.
    this.chartBox = h('div.chart', { style: { minHeight: `${HEIGHT}px` } });
    // Said instead of a chart until there is one: "Loading…" while a run's
    // series is still to come (a card below the fold), never empty axes.
    this.status = h('div.block-status.scalar-status', null, 'Loading…');
    this.chartBox.append(this.status);
    this.legend = h('div.legend');
    this.note = h('span.note');
    this.el = h('div.card.scalar-card', { 'data-tag': tag, style: { height: `${CARD_HEIGHT}px` } },
      h('div.card-head', null, h('div.card-title', { title: tag }, tag), this.note, this.actions()),
      this.chartBox, this.legend);
    this.el.dataset.state = 'loading';
    this.tip = tooltip(this.el);
  }

  actions() {
    const button = (title, label, onclick) => h('button.small', { type: 'button', title, onclick }, label);
    const runsHeld = () => this.env.runs().filter((r) => this.env.series(r, this.tag));
    return h('div.card-actions', null,
      button('Reset zoom', 'Reset', () => this.resetZoom()),
      button('Download CSV', 'CSV', () => exportScalars(this.tag, runsHeld(), 'csv')),
      button('Download JSON', 'JSON', () => exportScalars(this.tag, runsHeld(), 'json')));
  }

  // The runs to draw, each with its series (the zoomed range's when
  // zoomed) and x values for the axis mode.
  parts() {
    const out = [];
    for (const run of this.env.runs()) {
      const full = this.env.series(run, this.tag);
      const s = this.zoomData?.get(run) || full;
      if (!s || !s.step.length) continue;
      out.push({ run, s, x: xValues(s, settings.x, (full || s).wall[0]) });
    }
    return out;
  }

  draw() {
    const parts = this.parts();
    const plot = buildPlot(parts, settings, this.env.colorOf);
    this.markers = collectMarkers(parts, this.env.colorOf);
    this.drawn = plot.drawn;
    this.yRange = plot.yRange;
    this.describe(parts, plot.series.length - 1);
    if (!parts.length) {
      this.showStatus(this.env.pending(this.tag) ? 'Loading…' : 'No data');
      return;
    }
    this.status.hidden = true;
    this.el.dataset.state = 'ready';
    this.render(plot);
    this.renderLegend();
  }

  // No chart: what the card waits for, in words.
  showStatus(text) {
    this.destroyChart();
    this.shape = '';
    this.status.textContent = text;
    this.status.hidden = false;
    this.el.dataset.state = text === 'Loading…' ? 'loading' : 'empty';
    this.legend.replaceChildren();
  }

  // What is drawn, on the element (the end-to-end tests read it) and in
  // the note beside the title.
  describe(parts, seriesCount) {
    const d = this.el.dataset;
    const downsampled = parts.some((p) => p.s.downsampled);
    d.runs = String(parts.length);
    d.points = JSON.stringify(Object.fromEntries(parts.map((p) => [p.run, p.s.step.length])));
    d.markers = String(this.markers.length);
    d.series = String(seriesCount);
    d.zoomed = String(!!this.zoom);
    d.downsampled = String(downsampled);
    d.total = String(parts.reduce((a, p) => a + p.s.total, 0));
    this.note.textContent = this.zoom ? 'zoomed' : downsampled ? 'downsampled · min/max envelope' : '';
  }

  // New data for the same chart, or a new chart when the series or axes
  // changed shape.
  render({ series, bands, data }) {
    const shape = JSON.stringify([series.map((x) => x.label), settings.x, settings.log, settings.outliers, settings.smoothing > 0, !!this.zoom]);
    if (this.plot && shape === this.shape) {
      this.plot.setData(data, !this.zoom);
      if (this.zoom) this.plot.setScale('x', this.zoom);
      else this.spanOnePoint(data[0]);
      return;
    }
    this.destroyChart();
    this.shape = shape;
    this.plot = new uPlot(this.chartOptions(series, bands), data, this.chartBox);
    this.plot.over.addEventListener('mouseleave', () => this.tip.hide());
    this.plot.over.addEventListener('dblclick', () => this.resetZoom());
    followMarkerLinks(this.plot, () => this.markers, (run) => !!this.env.alertsOf(run));
    this.stopResize = autosize(this.plot, this.chartBox, HEIGHT);
    if (!this.zoom) this.spanOnePoint(data[0]);
  }

  // A single x (one point, as an epoch metric after one epoch): uPlot would
  // span [x, x + 100]; a step (or a second) either side centres it.
  spanOnePoint(xs) {
    if (xs.length === 1) this.plot.setScale('x', { min: xs[0] - 1, max: xs[0] + 1 });
  }

  chartOptions(series, bands) {
    const zoomed = this.zoom ? { auto: false, min: this.zoom.min, max: this.zoom.max } : {};
    return {
      width: Math.max(300, this.chartBox.clientWidth || 460), height: HEIGHT, series, bands,
      legend: { show: false },
      scales: {
        x: { time: settings.x === 'wall', ...zoomed },
        // Read at each redraw: new data may bring a new outlier range.
        y: { distr: settings.log ? 3 : 1, range: (u, min, max) => yRange(this.yRange, min, max) },
      },
      axes: [xAxis(settings.x), yAxis()],
      cursor: { drag: { x: true, y: false, setScale: false }, points: { size: 6 } },
      hooks: {
        setCursor: [(u) => this.showTip(u)],
        setSelect: [(u) => this.onSelect(u)],
        // The x range shown, on the element (the end-to-end tests read it).
        setScale: [(u, key) => { if (key === 'x') this.el.dataset.xRange = `${u.scales.x.min},${u.scales.x.max}`; }],
        draw: [(u) => drawMarkers(u, this.markers)],
      },
    };
  }

  renderLegend() {
    this.legend.replaceChildren(...this.drawn.map(({ run, sm }) => h('span.legend-item', null,
      h('span.swatch', { style: { background: this.env.colorOf(run) } }),
      h('span.legend-run', null, run),
      h('span.legend-value', null, fmtValue(sm.length ? sm[sm.length - 1] : null)),
      alertLink(run, this.env.alertsOf(run)))));
  }

  showTip(u) {
    const idx = u.cursor.idx;
    if (idx === null || idx === undefined || !this.drawn.length) { this.tip.hide(); return; }
    this.tip.show(u, tipRows(this.drawn, u.data[0][idx], { smoothing: settings.smoothing, colorOf: this.env.colorOf }));
  }

  // Drag-select zooms to the range; downsampled runs are re-fetched there
  // at full resolution. A newer zoom started meanwhile wins.
  async onSelect(u) {
    const sel = u.select;
    if (sel.width < 4) return;
    const min = u.posToVal(sel.left, 'x'), max = u.posToVal(sel.left + sel.width, 'x');
    u.setSelect({ left: 0, top: 0, width: 0, height: 0 }, false);
    this.zoom = { min, max };
    const zoomData = new Map();
    await pooled(this.parts().map((p) => async () => {
      const s = await this.fetchRange(p, min, max);
      if (s) zoomData.set(p.run, s);
    }), 4);
    if (this.zoom?.min !== min) return;
    this.zoomData = zoomData.size ? zoomData : null;
    this.draw();
  }

  // A downsampled run's steps covering x in [min, max] (a row either side),
  // at full resolution; null when the held rows already are.
  fetchRange({ run, s, x }, min, max) {
    const lo = x.findIndex((v) => v >= min), hi = x.findLastIndex((v) => v <= max);
    if (lo < 0 || hi < 0 || !this.env.series(run, this.tag)?.downsampled) return null;
    const minStep = s.step[Math.max(0, lo - 1)], maxStep = s.step[Math.min(s.step.length - 1, hi + 1)];
    return fetchSeries(run, this.tag, { min_step: minStep, max_step: maxStep, points: 2 * POINTS });
  }

  // Forgets the zoom; redraws unless told not to (the caller redraws).
  resetZoom({ redraw = true } = {}) {
    this.zoom = null;
    this.zoomData = null;
    if (redraw) this.draw();
  }

  destroyChart() {
    this.plot?.destroy();
    this.stopResize?.();
    this.plot = null;
  }

  destroy() { this.destroyChart(); }
}

// The y range: the outlier band when set, else uPlot's padded range of
// what is drawn ([0, 1] when nothing is).
function yRange(fixed, min, max) {
  if (fixed) return fixed;
  if (min === null || max === null) return [0, 1];
  if (settings.log) return uPlot.rangeLog(min, max, 10, true);
  return uPlot.rangeNum(min, max, 0.1, true);
}
