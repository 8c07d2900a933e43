// scatter.js — the scatter-plot matrix: a small plot of each shown
// hyperparameter (rows, on x) against each shown metric (columns, on y),
// a dot per run in the colour of the chosen metric, runs filtered out as
// faint grey dots. Axes use the columns' scales (log where they span
// decades, a position per category), so a dot sits where the parallel
// coordinates put the run. One canvas for the whole matrix.

import { h } from '../core/dom.js';
import { ramp, tickLabel } from './model.js';

const CELL_W = 190, CELL_H = 130, PAD = 34, LEFT = 110, TOP = 22;

export class ScatterMatrix {
  constructor(model, env) {
    this.model = model;
    this.env = env;           // {columns() -> shown columns, colorBy() -> key, runColor(run)}
    this.canvas = h('canvas.hp-canvas', { 'data-view': 'scatter' });
    this.el = h('div.hp-scatter', null, this.canvas);
  }

  draw() {
    const cols = this.env.columns();
    const xs = cols.filter((c) => c.kind === 'hparam'), ys = cols.filter((c) => c.kind === 'metric');
    const w = LEFT + ys.length * CELL_W + 10, ht = TOP + xs.length * CELL_H + 10;
    const dpr = window.devicePixelRatio || 1, cv = this.canvas;
    cv.width = Math.round(w * dpr);
    cv.height = Math.round(ht * dpr);
    cv.style.width = `${w}px`;
    cv.style.height = `${ht}px`;
    const g = cv.getContext('2d');
    g.setTransform(dpr, 0, 0, dpr, 0, 0);
    g.clearRect(0, 0, w, ht);
    if (!xs.length || !ys.length) return;
    // Each run's colour, filter verdict and position on every column,
    // once per draw: the cells only look them up.
    const colorCol = this.model.column(this.env.colorBy());
    const runs = this.model.runs;
    const ok = runs.map((r) => this.model.passes(r));
    const colors = runs.map((r) => (colorCol ? ramp(this.model.position(colorCol, r.values.get(colorCol.key))) : this.env.runColor(r.name)));
    const pos = new Map(cols.map((c) => [c.key, runs.map((r) => this.model.position(c, r.values.get(c.key)))]));
    // Dots grouped by colour (ramp() gives few distinct ones), the runs
    // filtered out first, underneath: one fill per colour and cell.
    const groups = new Map([['rgba(154,160,166,0.35)', []]]);
    runs.forEach((r, k) => {
      const c = ok[k] ? colors[k] : 'rgba(154,160,166,0.35)';
      if (!groups.has(c)) groups.set(c, []);
      groups.get(c).push(k);
    });
    g.font = '600 11px system-ui, sans-serif';
    g.fillStyle = '#202124';
    g.textAlign = 'center';
    ys.forEach((c, j) => g.fillText(c.label, LEFT + j * CELL_W + CELL_W / 2, 14));
    xs.forEach((cx, i) => {
      g.save();
      g.translate(14, TOP + i * CELL_H + CELL_H / 2);
      g.rotate(-Math.PI / 2);
      g.textAlign = 'center';
      g.fillStyle = '#202124';
      g.fillText(cx.label + (cx.log ? ' (log)' : ''), 0, 0);
      g.restore();
      ys.forEach((cy, j) => this.cell(g, LEFT + j * CELL_W, TOP + i * CELL_H, cx, cy,
        { groups, ok, px: pos.get(cx.key), py: pos.get(cy.key) }));
    });
  }

  cell(g, x0, y0, cx, cy, d) {
    const w = CELL_W - PAD, ht = CELL_H - PAD;
    g.strokeStyle = '#cfd8dc';
    g.lineWidth = 1;
    g.strokeRect(x0 + 0.5, y0 + 0.5, w, ht);
    g.fillStyle = '#5f6368';
    g.font = '9px system-ui, sans-serif';
    g.textAlign = 'right';
    for (const p of [0, 1]) g.fillText(this.tick(cy, p), x0 - 2, y0 + (1 - p) * ht + (p ? 8 : 0));
    // The x ticks sit inside their cell's edges, clear of the next cell's.
    for (const p of [0, 1]) {
      g.textAlign = p ? 'right' : 'left';
      g.fillText(this.tick(cx, p), x0 + p * w, y0 + ht + 11);
    }
    for (const [color, ks] of d.groups) {
      if (!ks.length) continue;
      g.fillStyle = color;
      g.beginPath();
      for (const k of ks) {
        const px = d.px[k], py = d.py[k];
        if (px === null || px === undefined || py === null || py === undefined) continue;
        const size = d.ok[k] ? 5 : 3;
        g.rect(x0 + 3 + px * (w - 6) - size / 2, y0 + 3 + (1 - py) * (ht - 6) - size / 2, size, size);
      }
      g.fill();
    }
  }

  tick(c, p) {
    if (!c.numeric) return p ? c.values[c.values.length - 1] ?? '' : c.values[0] ?? '';
    return tickLabel(c, p, this.model);
  }
}
