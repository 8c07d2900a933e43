// parcoords.js — parallel coordinates on a canvas: an axis per shown
// column (log where the values span decades, a point per category for
// strings), a line per run coloured by the chosen metric (viridis, low to
// high), runs filtered out drawn faint underneath. Dragging along an axis
// brushes a range of it (the runs outside leave every view); a click on
// an axis without a drag clears its brush. The line under the mouse is
// drawn bold and named, with its values, in a hover card. A canvas, not
// SVG: a thousand runs redraw in a few milliseconds, so a brush follows
// the mouse. Axes keep AXIS_GAP between them, room for their names and
// ticks: with more columns than the card holds (a fit records each
// layer's size as an hparam, each of its scalars as a metric) the canvas
// grows wider than the card, which scrolls sideways.

import { fmtValue, h } from '../core/dom.js';
import { ramp, tickLabel } from './model.js';

const TOP = 46, BOTTOM = 26, SIDE = 56, HEIGHT = 340, GRAB = 14, AXIS_GAP = 112;

export class ParallelCoordinates {
  constructor(model, env) {
    this.model = model;
    this.env = env;           // {columns() -> shown columns, colorBy() -> key, onBrush()}
    this.canvas = h('canvas.hp-canvas', { 'data-view': 'parcoords' });
    this.tip = h('div.tooltip.hp-tip');
    this.tip.hidden = true;
    this.el = h('div.hp-parcoords', null, this.canvas, this.tip);
    this.drag = null;
    this.hover = null;        // the run under the mouse
    this.canvas.addEventListener('mousedown', (e) => this.down(e));
    this.canvas.addEventListener('mousemove', (e) => { if (!this.drag) this.hoverAt(e); });
    this.canvas.addEventListener('mouseleave', () => this.setHover(null));
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

  // The canvas's width: the card's, or more when the axes need it.
  width() {
    return Math.max(this.el.clientWidth || 800, 2 * SIDE + (this.env.columns().length - 1) * AXIS_GAP);
  }

  axes() {
    const cols = this.env.columns();
    const w = this.width();
    const step = cols.length > 1 ? (w - 2 * SIDE) / (cols.length - 1) : 0;
    return cols.map((c, i) => ({ c, x: cols.length > 1 ? SIDE + i * step : w / 2 }));
  }

  y(p) { return TOP + (1 - p) * (HEIGHT - TOP - BOTTOM); }
  p(y) { return Math.max(0, Math.min(1, 1 - (y - TOP) / (HEIGHT - TOP - BOTTOM))); }

  draw() {
    const w = this.width(), dpr = window.devicePixelRatio || 1;
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
    const hovered = this.hover && passing.find((r) => r.name === this.hover);
    if (hovered) {
      g.lineWidth = 3.5;
      g.strokeStyle = '#202124';
      g.beginPath();
      this.path(g, hovered, axes);
      g.stroke();
    }
    for (const a of axes) this.axis(g, a);
    this.shownCount = passing.length;
  }

  // ---- hover ----

  // The shown run whose line passes nearest the mouse (within 6 px).
  hoverAt(e) {
    const { x, y } = this.local(e);
    const axes = this.layout || [];
    let best = null, bestD = 36;
    for (const r of this.model.runs) {
      if (!this.model.passes(r)) continue;
      let prev = null;
      for (const { c, x: ax } of axes) {
        const p = this.model.position(c, r.values.get(c.key));
        const pt = p === null || p === undefined ? null : [ax, this.y(p)];
        if (prev && pt && x >= prev[0] - 6 && x <= pt[0] + 6) {
          const d = segmentDistance2(x, y, prev, pt);
          if (d < bestD) { bestD = d; best = r; }
        }
        prev = pt;
      }
    }
    this.setHover(best, x, y);
  }

  setHover(r, x, y) {
    const name = r?.name ?? null;
    if (name !== this.hover) {
      this.hover = name;
      this.el.dataset.hover = name ?? '';
      this.draw();
    }
    if (!r) { this.tip.hidden = true; return; }
    this.tip.replaceChildren(h('div.tip-row', null, h('span.tip-run', null, r.name)),
      ...this.env.columns().map((c) => {
        const v = r.values.get(c.key);
        return h('div.tip-row', null, h('span.muted', null, c.label), h('span.tip-num', null, typeof v === 'number' ? fmtValue(v) : v ?? '–'));
      }));
    this.tip.hidden = false;
    const w = this.width();
    this.tip.style.left = `${x + 16 + this.tip.offsetWidth < w ? x + 16 : Math.max(4, x - 16 - this.tip.offsetWidth)}px`;
    this.tip.style.top = `${Math.max(4, y - this.tip.offsetHeight / 2)}px`;
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
    return [0, 0.25, 0.5, 0.75, 1].map((p) => [p, tickLabel(c, p, this.model)]);
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

// The squared distance from (x, y) to the segment a-b.
function segmentDistance2(x, y, a, b) {
  const dx = b[0] - a[0], dy = b[1] - a[1];
  const t = dx || dy ? Math.max(0, Math.min(1, ((x - a[0]) * dx + (y - a[1]) * dy) / (dx * dx + dy * dy))) : 0;
  const px = a[0] + t * dx - x, py = a[1] + t * dy - y;
  return px * px + py * py;
}
