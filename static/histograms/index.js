// The Histograms dashboard: per tag and run, the histograms of the last
// steps drawn as an offset (ridge) plot — older steps behind and above,
// newer in front — or overlaid on one baseline. Hovering picks a step and
// shows its statistics.

import { getJSON } from '../core/api.js';
import { alpha } from '../core/chart.js';
import { fmtValue, h, num } from '../core/dom.js';
import { runLabel, tagPage } from '../core/tagpage.js';

export const name = 'histograms';

const STEPS = 40;          // histograms drawn per run
const settings = { mode: 'offset' };

export function createPage(ctx) {
  const modeButtons = ['offset', 'overlay'].map((m) => h('button.small', {
    type: 'button', id: `mode-${m}`, className: `small${settings.mode === m ? ' on' : ''}`,
    onclick: () => {
      settings.mode = m;
      for (const b of modeButtons) b.classList.toggle('on', b.id === `mode-${m}`);
      page.redraw();
    } }, m === 'offset' ? 'Offset' : 'Overlay'));
  const controls = h('div', null, h('div.section-title', null, 'Histogram mode'), h('div.radios', null, ...modeButtons));

  const page = tagPage(ctx, { plugin: 'histograms', controls, noun: 'histogram', block: (run, tag) => {
    const canvas = h('canvas.hist-canvas');
    const info = h('span.muted');
    const el = h('div.run-block', { 'data-run': run }, runLabel(ctx, run, info), canvas);
    let hist = [];
    let hover = -1;
    const load = async () => {
      const r = await getJSON('histograms/series', { run, tag, points: STEPS });
      hist = r.histograms.map((x) => ({ ...x, min: num(x.min), max: num(x.max), edges: x.edges.map(num), counts: x.counts.map(num) }));
      el.dataset.histograms = String(hist.length);
      draw();
    };
    const draw = () => {
      info.textContent = hist.length ? `${hist.length} steps, ${hist[0].step}–${hist[hist.length - 1].step}` : '';
      drawHistograms(canvas, hist, ctx.runs.color(run), settings.mode, hover);
    };
    canvas.addEventListener('mousemove', (e) => {
      const i = pick(canvas, hist, settings.mode, e);
      if (i !== hover) { hover = i; draw(); }
    });
    canvas.addEventListener('mouseleave', () => { hover = -1; draw(); });
    const ro = new ResizeObserver(() => draw());
    ro.observe(el);
    return { el, load, onData: load, redraw: draw, destroy: () => ro.disconnect() };
  } });
  return page;
}

const PAD = { left: 12, right: 64, top: 10, bottom: 26 };

function geometry(canvas, mode) {
  const width = Math.max(300, canvas.parentElement.clientWidth);
  const height = mode === 'offset' ? 300 : 220;
  return { width, height, plotW: width - PAD.left - PAD.right, plotH: height - PAD.top - PAD.bottom };
}

// Densities (count / bucket width) so steps with different ranges compare.
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

function drawHistograms(canvas, hist, color, mode, hover) {
  const g = geometry(canvas, mode);
  const dpr = window.devicePixelRatio || 1;
  canvas.width = g.width * dpr;
  canvas.height = g.height * dpr;
  canvas.style.height = `${g.height}px`;
  const c = canvas.getContext('2d');
  c.setTransform(dpr, 0, 0, dpr, 0, 0);
  c.clearRect(0, 0, g.width, g.height);
  c.font = '11px system-ui, sans-serif';
  if (!hist.length) { c.fillStyle = '#5f6368'; c.fillText('No histograms', PAD.left, 20); return; }
  const { out, lo, hi, top } = shapes(hist);
  const n = hist.length;
  const X = (v) => PAD.left + ((v - lo) / (hi - lo)) * g.plotW;
  // offset: each curve takes 40% of the height, baselines spread over the rest
  const curveH = mode === 'offset' ? g.plotH * 0.4 : g.plotH;
  const base = (i) => (mode === 'offset' ? PAD.top + curveH + (n > 1 ? (i / (n - 1)) * (g.plotH - curveH) : g.plotH - curveH) : PAD.top + g.plotH);

  // x axis
  c.strokeStyle = '#cfd8dc';
  c.fillStyle = '#3c4043';
  c.lineWidth = 1;
  c.beginPath();
  c.moveTo(PAD.left, PAD.top + g.plotH + 0.5);
  c.lineTo(PAD.left + g.plotW, PAD.top + g.plotH + 0.5);
  c.stroke();
  c.textAlign = 'center';
  for (const v of niceTicks(lo, hi, Math.max(3, Math.floor(g.plotW / 110)))) {
    const x = X(v);
    c.beginPath(); c.moveTo(x, PAD.top + g.plotH); c.lineTo(x, PAD.top + g.plotH + 4); c.stroke();
    c.fillText(fmtValue(v), Math.min(Math.max(x, PAD.left + 16), PAD.left + g.plotW - 16), PAD.top + g.plotH + 16);
  }

  const order = [...hist.keys()];
  for (const i of order) {
    const pts = out[i];
    if (!pts.length) continue;
    const y0 = base(i);
    const age = n > 1 ? i / (n - 1) : 1;              // 0 oldest .. 1 newest
    c.beginPath();
    c.moveTo(X(pts[0][0]), y0);
    for (const [x, d] of pts) c.lineTo(X(x), y0 - (d / top) * curveH);
    c.lineTo(X(pts[pts.length - 1][0]), y0);
    if (mode === 'offset') { c.fillStyle = alpha(color, 0.08 + 0.22 * age); c.fill(); }
    c.strokeStyle = i === hover ? '#202124' : alpha(color, 0.25 + 0.75 * age);
    c.lineWidth = i === hover ? 2 : i === n - 1 ? 1.6 : 1;
    c.stroke();
  }
  // step labels on the right (offset), or the step range (overlay)
  c.textAlign = 'left';
  c.fillStyle = '#5f6368';
  if (mode === 'offset') {
    const every = Math.max(1, Math.ceil(n / 6));
    for (let i = n - 1; i >= 0; i -= every) c.fillText(`step ${hist[i].step}`, PAD.left + g.plotW + 6, base(i) + 3);
  } else {
    c.fillText(`steps ${hist[0].step}–${hist[n - 1].step}`, PAD.left + g.plotW - 120, PAD.top + 10);
  }
  if (hover >= 0 && hist[hover]) {
    const x = hist[hover];
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
}

// Round tick values (1, 2 or 5 times a power of ten) inside [lo, hi].
function niceTicks(lo, hi, count) {
  const raw = (hi - lo) / count, p = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 5, 10].map((m) => m * p).find((s) => s >= raw) || raw;
  const out = [];
  for (let v = Math.ceil(lo / step) * step; v <= hi + step * 1e-9 && out.length < 50; v += step) out.push(+v.toPrecision(12));
  return out;
}

// The histogram nearest the mouse: by baseline (offset) or by latest (overlay).
function pick(canvas, hist, mode, e) {
  if (!hist.length) return -1;
  const r = canvas.getBoundingClientRect();
  const y = e.clientY - r.top;
  const g = geometry(canvas, mode);
  if (mode !== 'offset') return hist.length - 1;
  const n = hist.length, curveH = g.plotH * 0.4;
  const t = n > 1 ? (y - PAD.top - curveH) / (g.plotH - curveH) : 1;
  return Math.max(0, Math.min(n - 1, Math.round(t * (n - 1))));
}
