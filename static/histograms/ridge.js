// ridge.js — draws a run's histograms on a canvas: as a ridge plot (each
// step on its own baseline, older ones behind and above) or overlaid on
// one baseline; densities (count / bucket width) so that steps with
// different ranges compare. Also which step the mouse points at.

import { alpha } from '../core/chart.js';
import { fmtValue, num } from '../core/dom.js';

const PAD = { left: 12, right: 64, top: 10, bottom: 26 };
const CURVE_H = 90;    // the pixels one curve rises
const STEP_H = 6;      // offset mode: the rise from one step's baseline to the next
const SPREAD_MAX = 130; // ... at most, whatever the number of steps

// The canvas height for n histograms, sized to what it draws: one curve
// (overlay, or a single step), or the curve and the steps stacked behind.
export function plotHeight(mode, n = 1) {
  const spread = mode === 'offset' && n > 1 ? Math.min(SPREAD_MAX, (n - 1) * STEP_H) : 0;
  return PAD.top + CURVE_H + spread + PAD.bottom;
}

function geometry(canvas, mode, n) {
  const width = Math.max(240, canvas.parentElement.clientWidth);
  const height = plotHeight(mode, n);
  return { width, height, plotW: width - PAD.left - PAD.right, plotH: height - PAD.top - PAD.bottom };
}

// Per histogram its (centre, density) points; the common x range and top.
function shapes(hist) {
  let lo = Infinity, hi = -Infinity, top = 0;
  const out = hist.map((x) => {
    const pts = [];
    for (let i = 0; i < x.counts.length; i++) {
      const w = x.edges[i + 1] - x.edges[i] || 1;
      pts.push([(x.edges[i] + x.edges[i + 1]) / 2, x.counts[i] / w]);
    }
    if (x.edges.length) { lo = Math.min(lo, x.edges[0]); hi = Math.max(hi, x.edges[x.edges.length - 1]); }
    for (const p of pts) top = Math.max(top, p[1]);
    return pts;
  });
  if (!(hi > lo)) { lo -= 1; hi += 1; }
  return { out, lo, hi, top: top || 1 };
}

// Where things go: x of a value, each histogram's baseline, a curve's height.
function layout(g, mode, n, lo, hi) {
  const curveH = CURVE_H;
  const bottom = PAD.top + g.plotH;
  return {
    curveH,
    X: (v) => PAD.left + ((v - lo) / (hi - lo)) * g.plotW,
    base: (i) => (mode !== 'offset' ? bottom
      : PAD.top + curveH + (n > 1 ? (i / (n - 1)) * (g.plotH - curveH) : g.plotH - curveH)),
  };
}

function sizeCanvas(canvas, g) {
  const dpr = window.devicePixelRatio || 1;
  canvas.width = g.width * dpr;
  canvas.height = g.height * dpr;
  canvas.style.height = `${g.height}px`;
  const c = canvas.getContext('2d');
  c.setTransform(dpr, 0, 0, dpr, 0, 0);
  c.clearRect(0, 0, g.width, g.height);
  c.font = '11px system-ui, sans-serif';
  return c;
}

export function drawHistograms(canvas, hist, color, mode, hover) {
  const g = geometry(canvas, mode, hist.length);
  const c = sizeCanvas(canvas, g);
  if (!hist.length) return;   // the block says so in words
  const { out, lo, hi, top } = shapes(hist);
  const at = layout(g, mode, hist.length, lo, hi);
  drawAxis(c, g, at, lo, hi);
  drawCurves(c, { out, top, at, color, mode, hover });
  drawStepLabels(c, g, at, hist, mode);
  if (hover >= 0 && hist[hover]) drawStats(c, hist[hover]);
}

function drawAxis(c, g, at, lo, hi) {
  const y = PAD.top + g.plotH;
  c.strokeStyle = '#cfd8dc';
  c.fillStyle = '#3c4043';
  c.lineWidth = 1;
  c.beginPath();
  c.moveTo(PAD.left, y + 0.5);
  c.lineTo(PAD.left + g.plotW, y + 0.5);
  c.stroke();
  c.textAlign = 'center';
  for (const v of niceTicks(lo, hi, Math.max(3, Math.floor(g.plotW / 110)))) {
    const x = at.X(v);
    c.beginPath(); c.moveTo(x, y); c.lineTo(x, y + 4); c.stroke();
    c.fillText(fmtValue(v), Math.min(Math.max(x, PAD.left + 16), PAD.left + g.plotW - 16), y + 16);
  }
}

// Oldest first, so the newest is drawn on top; the newest darkest.
function drawCurves(c, { out, top, at, color, mode, hover }) {
  const n = out.length;
  out.forEach((pts, i) => {
    if (!pts.length) return;
    const y0 = at.base(i);
    const age = n > 1 ? i / (n - 1) : 1;              // 0 oldest .. 1 newest
    c.beginPath();
    c.moveTo(at.X(pts[0][0]), y0);
    for (const [x, d] of pts) c.lineTo(at.X(x), y0 - (d / top) * at.curveH);
    c.lineTo(at.X(pts[pts.length - 1][0]), y0);
    if (mode === 'offset') { c.fillStyle = alpha(color, 0.08 + 0.22 * age); c.fill(); }
    c.strokeStyle = i === hover ? '#202124' : alpha(color, 0.25 + 0.75 * age);
    c.lineWidth = i === hover ? 2 : i === n - 1 ? 1.6 : 1;
    c.stroke();
  });
}

// Step labels on the right (offset), or the step range (overlay).
function drawStepLabels(c, g, at, hist, mode) {
  const n = hist.length;
  c.textAlign = 'left';
  c.fillStyle = '#5f6368';
  if (mode === 'offset') {
    const every = Math.max(1, Math.ceil(n / 6));
    for (let i = n - 1; i >= 0; i -= every) c.fillText(`step ${hist[i].step}`, PAD.left + g.plotW + 6, at.base(i) + 3);
  } else {
    const label = n === 1 ? `step ${hist[0].step}` : `steps ${hist[0].step}–${hist[n - 1].step}`;
    c.textAlign = 'right';
    c.fillText(label, PAD.left + g.plotW, PAD.top + 10);
  }
}

// The hovered step's statistics in a dark strip at the top.
function drawStats(c, x) {
  const mean = x.count ? num(x.sum) / num(x.count) : NaN;
  const text = `step ${x.step} · count ${fmtValue(num(x.count))} · min ${fmtValue(x.min)} · max ${fmtValue(x.max)} · mean ${fmtValue(mean)}` +
    (x.nan || x.posinf || x.neginf ? ` · NaN ${x.nan} +Inf ${x.posinf} -Inf ${x.neginf}` : '');
  c.font = '12px system-ui, sans-serif';
  const w = c.measureText(text).width + 12;
  c.fillStyle = 'rgba(32,33,36,.92)';
  c.fillRect(PAD.left, PAD.top, w, 20);
  c.fillStyle = '#fff';
  c.fillText(text, PAD.left + 6, PAD.top + 14);
}

// Round tick values (1, 2 or 5 times a power of ten) inside [lo, hi]. Each
// is a whole multiple of the step, computed afresh (not summed), so 0 is
// exactly 0 and not a rounding residue such as 1.7e-18.
function niceTicks(lo, hi, count) {
  const raw = (hi - lo) / count, p = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 5, 10].map((m) => m * p).find((s) => s >= raw) || raw;
  const out = [];
  for (let k = Math.ceil(lo / step); k * step <= hi + step * 1e-9 && out.length < 50; k++) out.push(+(k * step).toPrecision(12));
  return out;
}

// The histogram nearest the mouse: by baseline (offset) or the latest (overlay).
export function pick(canvas, hist, mode, e) {
  if (!hist.length) return -1;
  if (mode !== 'offset') return hist.length - 1;
  const y = e.clientY - canvas.getBoundingClientRect().top;
  const g = geometry(canvas, mode, hist.length);
  const n = hist.length, curveH = CURVE_H;
  const t = n > 1 ? (y - PAD.top - curveH) / (g.plotH - curveH) : 1;
  return Math.max(0, Math.min(n - 1, Math.round(t * (n - 1))));
}
