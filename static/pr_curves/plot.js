// plot.js — one precision-recall chart on a canvas: recall on x, precision
// on y, both 0..1, a curve per run in its colour; the point under the
// mouse (nearest over every curve) is ringed and reported to onHover with
// its run and threshold index. Curves are drawn from the highest threshold
// (recall near 0) to the lowest, as TensorBoard draws them.

import { h } from '../core/dom.js';

const M = { left: 44, right: 12, top: 10, bottom: 34 };

export class PrPlot {
  constructor(height, onHover) {
    this.height = height;
    this.onHover = onHover;
    this.curves = [];   // [{run, color, precision, recall}]
    this.hover = null;
    this.canvas = h('canvas.pr-canvas');
    this.el = h('div.pr-plot', null, this.canvas);
    this.canvas.addEventListener('mousemove', (e) => this.move(e));
    this.canvas.addEventListener('mouseleave', () => { this.hover = null; this.draw(); this.onHover(null); });
    this.ro = new ResizeObserver(() => this.draw());
    this.ro.observe(this.el);
  }

  destroy() { this.ro.disconnect(); }

  set(curves) { this.curves = curves; this.hover = null; this.draw(); }

  sx(r) { return M.left + r * (this.w - M.left - M.right); }
  sy(p) { return M.top + (1 - p) * (this.height - M.top - M.bottom); }

  draw() {
    const w = this.el.clientWidth || 400, dpr = window.devicePixelRatio || 1;
    this.w = w;
    const cv = this.canvas;
    cv.width = Math.round(w * dpr);
    cv.height = Math.round(this.height * dpr);
    cv.style.width = `${w}px`;
    cv.style.height = `${this.height}px`;
    const g = cv.getContext('2d');
    g.setTransform(dpr, 0, 0, dpr, 0, 0);
    g.clearRect(0, 0, w, this.height);
    g.font = '10px system-ui, sans-serif';
    g.fillStyle = '#5f6368';
    g.strokeStyle = '#eceff1';
    for (let i = 0; i <= 5; i++) {
      const t = i / 5;
      g.beginPath();
      g.moveTo(this.sx(t), this.sy(0));
      g.lineTo(this.sx(t), this.sy(1));
      g.moveTo(this.sx(0), this.sy(t));
      g.lineTo(this.sx(1), this.sy(t));
      g.stroke();
      g.textAlign = 'center';
      g.fillText(t.toFixed(1), this.sx(t), this.sy(0) + 13);
      g.textAlign = 'right';
      g.fillText(t.toFixed(1), this.sx(0) - 5, this.sy(t) + 3);
    }
    g.textAlign = 'center';
    g.fillText('recall', this.sx(0.5), this.height - 4);
    g.save();
    g.translate(11, this.sy(0.5));
    g.rotate(-Math.PI / 2);
    g.fillText('precision', 0, 0);
    g.restore();
    g.lineWidth = 1.8;
    for (const c of this.curves) {
      g.strokeStyle = c.color;
      g.beginPath();
      let pen = false;
      for (let i = c.recall.length - 1; i >= 0; i--) {
        if (c.precision[i] === 0 && c.recall[i] === 0) continue;   // no prediction at all: no point
        const x = this.sx(c.recall[i]), y = this.sy(c.precision[i]);
        if (pen) g.lineTo(x, y); else g.moveTo(x, y);
        pen = true;
      }
      g.stroke();
    }
    if (this.hover) {
      const { curve, i } = this.hover;
      g.fillStyle = '#fff';
      g.strokeStyle = curve.color;
      g.lineWidth = 2;
      g.beginPath();
      g.arc(this.sx(curve.recall[i]), this.sy(curve.precision[i]), 4.5, 0, 2 * Math.PI);
      g.fill();
      g.stroke();
    }
  }

  move(e) {
    const r = this.canvas.getBoundingClientRect();
    const x = e.clientX - r.left, y = e.clientY - r.top;
    let best = null, bestD = 20 * 20;
    for (const curve of this.curves)
      for (let i = 0; i < curve.recall.length; i++) {
        if (curve.precision[i] === 0 && curve.recall[i] === 0) continue;
        const dx = this.sx(curve.recall[i]) - x, dy = this.sy(curve.precision[i]) - y;
        if (dx * dx + dy * dy < bestD) { bestD = dx * dx + dy * dy; best = { curve, i }; }
      }
    const same = best && this.hover && best.curve === this.hover.curve && best.i === this.hover.i;
    if (same) return;
    this.hover = best;
    this.draw();
    this.onHover(best, x, y);
  }
}

// The area under a precision-recall curve: trapezoids over recall from
// the highest threshold to the lowest, the curve extended flat to recall
// 0 at its first precision, thresholds without any prediction left out.
export function prAuc(precision, recall) {
  let area = 0, pr = null;
  for (let i = recall.length - 1; i >= 0; i--) {
    if (precision[i] === 0 && recall[i] === 0) continue;
    if (!pr) pr = [precision[i], 0];
    area += (recall[i] - pr[1]) * (precision[i] + pr[0]) / 2;
    pr = [precision[i], recall[i]];
  }
  return area;
}
