// parcoords.js — parallel coordinates on a canvas: an axis per shown
// column (log where the values span decades, a point per category for
// strings), a line per run coloured by the chosen metric (viridis, low to
// high), runs filtered out drawn faint underneath. Dragging along an axis
// brushes a range of it (the runs outside leave every view); a click on
// an axis without a drag clears its brush. A canvas, not SVG: a thousand
// runs redraw in a few milliseconds, so a brush follows the mouse.

import { h } from '../core/dom.js';
import { fmtTickValue, ramp } from './model.js';

const TOP = 46, BOTTOM = 26, SIDE = 56, HEIGHT = 340, GRAB = 14;

export class ParallelCoordinates {
  constructor(model, env) {
    this.model = model;
    this.env = env;           // {columns() -> shown columns, colorBy() -> key, onBrush()}
    this.canvas = h('canvas.hp-canvas', { 'data-view': 'parcoords' });
    this.el = h('div.hp-parcoords', null, this.canvas);
    this.drag = null;
    this.canvas.addEventListener('mousedown', (e) => this.down(e));
    window.addEventListener('mousemove', this.onMove = (e) => this.move(e));
    window.addEventListener('mouseup', this.onUp = (e) => this.up(e));
    this.ro = new ResizeObserver(() => this.draw());
    this.ro.observe(this.el);
  }

  destroy() {
    this.ro.disconnect();
    window.removeEventListener('mousemove', this.onMove);
    window.removeEventListener('mouseup', this.onUp);
  }

  axes() {
    const cols = this.env.columns();
    const w = this.el.clientWidth || 800;
    const step = cols.length > 1 ? (w - 2 * SIDE) / (cols.length - 1) : 0;
    return cols.map((c, i) => ({ c, x: cols.length > 1 ? SIDE + i * step : w / 2 }));
  }

  y(p) { return TOP + (1 - p) * (HEIGHT - TOP - BOTTOM); }
  p(y) { return Math.max(0, Math.min(1, 1 - (y - TOP) / (HEIGHT - TOP - BOTTOM))); }

  draw() {
    const w = this.el.clientWidth || 800, dpr = window.devicePixelRatio || 1;
    const cv = this.canvas;
    if (cv.width !== Math.round(w * dpr) || cv.height !== Math.round(HEIGHT * dpr)) {
      cv.width = Math.round(w * dpr);
      cv.height = Math.round(HEIGHT * dpr);
      cv.style.width = `${w}px`;
      cv.style.height = `${HEIGHT}px`;
    }
    const g = cv.getContext('2d');
    g.setTransform(dpr, 0, 0, dpr, 0, 0);
    g.clearRect(0, 0, w, HEIGHT);
    const axes = this.axes();
    this.layout = axes;
    if (!axes.length) return;
    const colorCol = this.model.column(this.env.colorBy());
    const passing = [], failing = [];
    for (const r of this.model.runs) (this.model.passes(r) ? passing : failing).push(r);
    g.lineWidth = 1;
    g.strokeStyle = 'rgba(154,160,166,0.25)';
    g.beginPath();
    for (const r of failing) this.path(g, r, axes);
    g.stroke();
    g.lineWidth = 1.4;
    for (const r of passing) {
      g.strokeStyle = colorCol ? ramp(this.model.position(colorCol, r.values.get(colorCol.key))) : this.env.runColor(r.name);
      g.beginPath();
      this.path(g, r, axes);
      g.stroke();
    }
    for (const a of axes) this.axis(g, a);
    this.shownCount = passing.length;
  }

  // A run's polyline; a missing value breaks it.
  path(g, r, axes) {
    let pen = false;
    for (const { c, x } of axes) {
      const p = this.model.position(c, r.values.get(c.key));
      if (p === null || p === undefined) { pen = false; continue; }
      const y = this.y(p);
      if (pen) g.lineTo(x, y); else g.moveTo(x, y);
      pen = true;
    }
  }

  axis(g, { c, x }) {
    g.strokeStyle = '#3c4043';
    g.lineWidth = 1;
    g.beginPath();
    g.moveTo(x, this.y(0));
    g.lineTo(x, this.y(1));
    g.stroke();
    g.fillStyle = '#202124';
    g.font = '600 11px system-ui, sans-serif';
    g.textAlign = 'center';
    g.fillText(c.label.length > 18 ? `${c.label.slice(0, 17)}…` : c.label, x, 16);
    g.font = '10px system-ui, sans-serif';
    g.fillStyle = '#5f6368';
    const mode = this.model.mode === 'step' ? `at step ${this.model.step}` : this.model.mode;
    g.fillText(c.kind === 'metric' ? `${mode}${c.log ? ' · log' : ''}` : c.log ? 'log' : '', x, 29);
    g.textAlign = 'right';
    g.lineJoin = 'round';
    for (const [p, label] of this.ticks(c)) {
      const y = this.y(p);
      g.beginPath();
      g.moveTo(x - 3, y);
      g.lineTo(x, y);
      g.stroke();
      // A white halo keeps the label readable over the lines.
      g.strokeStyle = 'rgba(255,255,255,0.85)';
      g.lineWidth = 3;
      g.strokeText(label, x - 5, y + 3);
      g.strokeStyle = '#3c4043';
      g.lineWidth = 1;
      g.fillText(label, x - 5, y + 3);
    }
    const b = this.model.brushes.get(c.key);
    if (b) {
      g.fillStyle = 'rgba(31,78,140,0.22)';
      g.strokeStyle = '#1f4e8c';
      const y0 = this.y(b.hi), y1 = this.y(b.lo);
      g.fillRect(x - 8, y0, 16, y1 - y0);
      g.strokeRect(x - 8, y0, 16, y1 - y0);
    }
  }

  ticks(c) {
    if (!c.numeric) return c.values.map((v) => [this.model.position(c, v), v.length > 10 ? `${v.slice(0, 9)}…` : v]);
    if (c.log) {
      const out = [];
      for (let e = Math.ceil(Math.log10(c.lo)); e <= Math.floor(Math.log10(c.hi)); e++)
        out.push([this.model.position(c, 10 ** e), `1e${e}`]);
      return out;
    }
    return [0, 0.25, 0.5, 0.75, 1].map((p) => [p, fmtTickValue(this.model.valueAt(c, p))]);
  }

  // ---- brushing ----

  local(e) {
    const r = this.canvas.getBoundingClientRect();
    return { x: e.clientX - r.left, y: e.clientY - r.top };
  }

  down(e) {
    const { x, y } = this.local(e);
    const a = (this.layout || []).find((ax) => Math.abs(ax.x - x) <= GRAB);
    if (!a || y < TOP - 8 || y > HEIGHT - BOTTOM + 8) return;
    e.preventDefault();
    this.drag = { key: a.c.key, p0: this.p(y), moved: false };
  }

  move(e) {
    if (!this.drag) return;
    const p = this.p(this.local(e).y);
    if (Math.abs(p - this.drag.p0) * (HEIGHT - TOP - BOTTOM) < 3 && !this.drag.moved) return;
    this.drag.moved = true;
    this.model.brushes.set(this.drag.key, { lo: Math.min(p, this.drag.p0), hi: Math.max(p, this.drag.p0) });
    this.env.onBrush();
  }

  up() {
    if (!this.drag) return;
    if (!this.drag.moved) this.model.brushes.delete(this.drag.key);
    this.drag = null;
    this.env.onBrush();
  }
}
