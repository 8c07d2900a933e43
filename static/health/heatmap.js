// heatmap.js — the Health page's heat map: one row per layer (input side
// at the top), one column per step (or interval of steps the server
// squeezed into a column, keeping its worst value), the colour the
// figure's value on a log scale (viridis: small values dark, so a layer
// whose gradients vanish is a dark band), with a legend of the scale.
// Zeros and values below the scale take its darkest colour; NaN and
// infinities are red; a cell with no value stays blank. The run's alerts
// about a layer are marked in its row at their step, a corner in the
// colour of their severity. Hovering a cell says its layer, step(s),
// value and alerts. Drawn on one canvas: a run of a few hundred steps
// and ten layers is thousands of cells.

import { fmtValue, h, num } from '../core/dom.js';

// Matplotlib's viridis at nine stops.
const VIRIDIS = ['#440154', '#472c7a', '#3b518b', '#2c718e', '#21908d', '#27ad81', '#5cc863', '#aadc32', '#fde725']
  .map((c) => [1, 3, 5].map((i) => parseInt(c.slice(i, i + 2), 16)));
const BAD = '#d93025';      // NaN, +Inf, -Inf
const SEVERITY = { critical: '#d93025', warning: '#f29900', info: '#1a73e8' };
const EMPTY = '#f1f3f4';    // no value
const LABEL_MAX = 220;      // px for the layer names, at most
const ROW_MIN = 16, ROW_MAX = 30;
const AXIS = 26;            // px under the cells for the step axis
const FONT = '12px system-ui, -apple-system, "Segoe UI", sans-serif';

// The colour at t in [0, 1].
export function viridis(t) {
  const x = Math.min(1, Math.max(0, t)) * (VIRIDIS.length - 1);
  const i = Math.min(VIRIDIS.length - 2, Math.floor(x)), f = x - i;
  const [a, b] = [VIRIDIS[i], VIRIDIS[i + 1]];
  return `rgb(${a.map((v, k) => Math.round(v + (b[k] - v) * f)).join(',')})`;
}

// The log10 range of the finite positive values: [lo, hi], a decade wide
// at least; null when there is none.
export function logRange(layers) {
  let lo = Infinity, hi = -Infinity;
  for (const l of layers) {
    for (const raw of l.values) {
      const v = num(raw);
      if (v === null || !Number.isFinite(v) || v <= 0) continue;
      const e = Math.log10(v);
      if (e < lo) lo = e;
      if (e > hi) hi = e;
    }
  }
  if (lo === Infinity) return null;
  if (hi - lo < 1) { const mid = (lo + hi) / 2; lo = mid - 0.5; hi = mid + 0.5; }
  return [lo, hi];
}

export class HeatMap {
  constructor() {
    this.canvas = h('canvas.heat-canvas', { id: 'health-heatmap' });
    this.tip = h('div.heat-tip', { id: 'health-tip', hidden: true });
    this.legend = h('div.heat-legend', { id: 'health-legend' });
    this.el = h('div.heat-wrap', null, this.canvas, this.tip, this.legend);
    this.data = null;
    this.geom = null;
    this.hover = null;
    this.marks = new Map();
    this.canvas.addEventListener('mousemove', (e) => this.onMove(e));
    this.canvas.addEventListener('mouseleave', () => this.setHover(null));
  }

  // Columns worth asking the server for: about one per 3 px of the width.
  columnsWanted() {
    const w = this.el.clientWidth || 900;
    return Math.max(50, Math.min(2000, Math.round((w - LABEL_MAX) / 3)));
  }

  // data: /api/health/heatmap's answer; alerts: the run's alerts (those
  // naming a layer of the map are marked).
  show(data, alerts = []) {
    this.data = data;
    this.marks = markAlerts(data, alerts);
    this.range = logRange(data.layers);
    this.layout();
    this.draw();
    this.drawLegend();
    const c = this.canvas.dataset;
    c.layers = String(data.layers.length);
    c.columns = String(data.steps.length);
    c.figure = data.figure;
    // Where the cells are, for the browser test's mouse.
    c.left = String(this.geom.label);
    c.cellWidth = String(this.geom.cellW);
    c.rowHeight = String(this.geom.row);
    this.setHover(this.hover && this.hover.row < data.layers.length && this.hover.col < data.steps.length ? this.hover : null);
  }

  layout() {
    const ctx = this.canvas.getContext('2d');
    ctx.font = FONT;
    const label = Math.min(LABEL_MAX, 12 + Math.max(40, ...this.data.layers.map((l) => ctx.measureText(l.layer).width)));
    const width = Math.max(300, this.el.clientWidth || 900);
    const rows = this.data.layers.length;
    const row = Math.max(ROW_MIN, Math.min(ROW_MAX, Math.floor(360 / Math.max(1, rows))));
    const cols = Math.max(1, this.data.steps.length);
    const cellW = (width - label - 8) / cols;
    this.geom = { label, width, row, cellW, height: rows * row + AXIS };
    const dpr = window.devicePixelRatio || 1;
    this.canvas.width = Math.round(width * dpr);
    this.canvas.height = Math.round(this.geom.height * dpr);
    this.canvas.style.width = `${width}px`;
    this.canvas.style.height = `${this.geom.height}px`;
  }

  colour(raw) {
    const v = num(raw);
    if (v === null) return EMPTY;
    if (!Number.isFinite(v)) return BAD;
    if (!this.range || v <= 0) return viridis(0);
    const [lo, hi] = this.range;
    return viridis((Math.log10(v) - lo) / (hi - lo));
  }

  draw() {
    const { label, width, row, cellW, height } = this.geom;
    const ctx = this.canvas.getContext('2d');
    const dpr = window.devicePixelRatio || 1;
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    ctx.clearRect(0, 0, width, height);
    ctx.font = FONT;
    ctx.textBaseline = 'middle';
    const { layers, steps } = this.data;
    layers.forEach((l, r) => {
      const y = r * row;
      ctx.fillStyle = '#3c4043';
      ctx.textAlign = 'right';
      ctx.fillText(fit(ctx, l.layer, label - 12), label - 8, y + row / 2);
      for (let k = 0; k < steps.length; k++) {
        const x0 = Math.floor(label + k * cellW), x1 = Math.floor(label + (k + 1) * cellW);
        ctx.fillStyle = this.colour(l.values[k]);
        ctx.fillRect(x0, y, Math.max(1, x1 - x0), row - 1);
      }
    });
    // The step axis: a tick at each end and a few between.
    ctx.fillStyle = '#5f6368';
    ctx.textAlign = 'center';
    const y = layers.length * row + AXIS / 2;
    const ticks = Math.min(steps.length, Math.max(2, Math.floor((width - label) / 110)));
    let lastEnd = -Infinity;
    for (let t = 0; t < ticks; t++) {
      const k = ticks === 1 ? 0 : Math.round((t * (steps.length - 1)) / (ticks - 1));
      const x = label + (k + 0.5) * cellW;
      const text = String(steps[k]);
      const w = ctx.measureText(text).width;
      if (x - w / 2 < lastEnd + 8) continue;
      ctx.fillText(text, Math.min(width - w / 2, x), y);
      lastEnd = x + w / 2;
    }
    for (const [key, list] of this.marks) {
      const [r, k] = key.split(':').map(Number);
      const x1 = Math.floor(label + (k + 1) * cellW), y0 = r * row;
      const size = Math.min(row - 4, 10);
      ctx.beginPath();
      ctx.moveTo(x1 - size - 1, y0);
      ctx.lineTo(x1, y0);
      ctx.lineTo(x1, y0 + size + 1);
      ctx.closePath();
      ctx.fillStyle = '#ffffff';
      ctx.fill();
      ctx.beginPath();
      ctx.moveTo(x1 - size + 1, y0);
      ctx.lineTo(x1, y0);
      ctx.lineTo(x1, y0 + size - 1);
      ctx.closePath();
      ctx.fillStyle = SEVERITY[list[0].severity] ?? BAD;
      ctx.fill();
    }
    if (this.hover) {
      const { row: r, col: k } = this.hover;
      // White inside black: seen on the darkest cells and on the brightest.
      const x = Math.floor(label + k * cellW), w = Math.max(3, Math.floor(cellW));
      ctx.lineWidth = 2;
      ctx.strokeStyle = '#202124';
      ctx.strokeRect(x - 1, r * row - 1, w + 2, row + 1);
      ctx.strokeStyle = '#ffffff';
      ctx.strokeRect(x + 1, r * row + 1, w - 2, row - 3);
    }
  }

  drawLegend() {
    const name = this.data.figure;
    if (!this.range) {
      this.legend.replaceChildren(h('span.muted', null, `No positive ${name} to scale: every value is 0 or missing.`));
      return;
    }
    const [lo, hi] = this.range;
    const stops = Array.from({ length: 9 }, (_, i) => `${viridis(i / 8)} ${(i * 100) / 8}%`).join(', ');
    const ticks = legendTicks(lo, hi);
    this.legend.replaceChildren(
      h('span.legend-label', null, `${name}, log scale`),
      h('span.legend-scale', null,
        h('span.legend-bar', { style: { background: `linear-gradient(90deg, ${stops})` } }),
        h('span.legend-ticks', null, ticks.map((v) =>
          h('span.legend-tick', { style: { left: `${((Math.log10(v) - lo) / (hi - lo)) * 100}%` } }, tickText(v))))),
      h('span.legend-key', null, h('span.key-swatch', { style: { background: viridis(0) } }), `≤ ${fmtValue(10 ** lo)} or 0`),
      h('span.legend-key', null, h('span.key-swatch', { style: { background: BAD } }), 'NaN / Inf'),
      h('span.legend-key', null, h('span.key-swatch.key-empty', { style: { background: EMPTY } }), 'no value'));
  }

  onMove(e) {
    if (!this.data || !this.geom) return;
    const r = this.canvas.getBoundingClientRect();
    const x = e.clientX - r.left, y = e.clientY - r.top;
    const { label, row, cellW } = this.geom;
    const col = Math.floor((x - label) / cellW), rowIx = Math.floor(y / row);
    const inside = x >= label && col >= 0 && col < this.data.steps.length && rowIx >= 0 && rowIx < this.data.layers.length;
    this.setHover(inside ? { row: rowIx, col, x, y } : null);
  }

  setHover(hv) {
    if (!this.data || !this.geom) return;   // nothing drawn yet (or any more)
    const same = hv && this.hover ? hv.row === this.hover.row && hv.col === this.hover.col : hv === this.hover;
    this.hover = hv;
    if (!same) this.draw();
    if (!hv) { this.tip.hidden = true; return; }
    const l = this.data.layers[hv.row];
    const k = hv.col;
    const first = this.data.steps[k], last = this.data.steps_last[k];
    const value = num(l.values[k]);
    const count = l.counts[k];
    const t = this.tip;
    t.dataset.row = String(hv.row);
    t.dataset.col = String(k);
    t.dataset.layer = l.layer;
    t.dataset.step = String(first);
    t.dataset.value = value === null ? '' : String(value);
    const lines = [
      h('div.tip-layer', null, l.layer),
      h('div', null, first === last ? `step ${first}` : `steps ${first}–${last}`),
      h('div.tip-value', null, `${this.data.figure} ${value === null ? 'no value' : fmtValue(value)}`)];
    if (count > 1) lines.push(h('div.muted', null, `worst of ${count} values, ${fmtValue(num(l.min[k]))} to ${fmtValue(num(l.max[k]))}`));
    for (const a of this.marks.get(`${hv.row}:${k}`) ?? []) {
      lines.push(h('div.tip-alert', null, `${a.severity}: ${a.kind.replace(/_/g, ' ')} at step ${a.step}`));
    }
    t.replaceChildren(...lines);
    t.hidden = false;
    // Beside the cursor, kept inside the map.
    const left = Math.min(hv.x + 14, this.geom.width - t.offsetWidth - 4);
    t.style.left = `${Math.max(0, left)}px`;
    t.style.top = `${hv.y + 14}px`;
  }

  destroy() { this.data = null; }
}

// text cut with "…" to fit w pixels.
function fit(ctx, text, w) {
  if (ctx.measureText(text).width <= w) return text;
  let lo = 0, hi = text.length;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (ctx.measureText(`…${text.slice(text.length - mid)}`).width <= w) lo = mid; else hi = mid - 1;
  }
  return `…${text.slice(text.length - lo)}`;
}

// The cells the alerts point at: "row:col" -> alerts, most severe first
// (the order the API gives). An alert's column is the one holding its
// step, or the first after it (figures and alerts share the checks'
// steps, so it is normally exact).
function markAlerts(data, alerts) {
  const rows = new Map(data.layers.map((l, i) => [l.layer, i]));
  const marks = new Map();
  for (const a of alerts) {
    const r = rows.get(a.layer);
    if (r === undefined || a.step === null) continue;
    const k = data.steps_last.findIndex((last) => last >= a.step);
    if (k < 0) continue;
    const key = `${r}:${k}`;
    if (!marks.has(key)) marks.set(key, []);
    marks.get(key).push(a);
  }
  return marks;
}

// Values for the legend on the log scale lo..hi (log10): the powers of
// ten, thinned to six at most, and 2x and 5x between them when the scale
// spans two decades or less.
function legendTicks(lo, hi) {
  const out = [];
  const mult = hi - lo <= 2 ? [1, 2, 5] : [1];
  for (let e = Math.floor(lo); e <= Math.ceil(hi); e++) {
    for (const m of mult) {
      const v = m * 10 ** e, x = Math.log10(v);
      if (x >= lo - 1e-9 && x <= hi + 1e-9) out.push(v);
    }
  }
  const step = Math.ceil(out.length / 6);
  return out.filter((_, i) => i % step === 0);
}

function tickText(v) {
  if (v >= 1e-3 && v < 1e4) return String(Number(v.toPrecision(3)));
  const e = Math.floor(Math.log10(v) + 1e-9), m = Math.round(v / 10 ** e);
  return m === 1 ? `1e${e}` : `${m}e${e}`;
}
