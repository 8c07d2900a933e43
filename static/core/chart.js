// chart.js — shared uPlot settings and helpers: readable axes, one x axis
// for several runs (joined data), a tooltip, and colour utilities.

import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';
import { fmtDuration, h } from './dom.js';

export { uPlot };

const AXIS = {
  stroke: '#3c4043',
  font: '11px system-ui, -apple-system, "Segoe UI", Roboto, sans-serif',
  grid: { stroke: '#eceff1', width: 1 },
  ticks: { stroke: '#cfd8dc', width: 1, size: 4 },
};

export function alpha(hex, a) {
  const n = parseInt(hex.slice(1), 16);
  return `rgba(${(n >> 16) & 255},${(n >> 8) & 255},${n & 255},${a})`;
}

// Tick labels for x by mode: steps ("12k"), relative time, wall clock.
const STEP_INCRS = Array.from({ length: 10 }, (_, e) => [1, 2, 5].map((m) => m * 10 ** e)).flat();

export function xAxis(mode) {
  const base = { ...AXIS, size: 36 };
  if (mode === 'wall') return base; // uPlot's time axis
  if (mode === 'relative') return { ...base, values: (u, ticks) => ticks.map((t) => fmtDuration(t)) };
  // Steps are whole numbers: ticks never fall between two.
  return { ...base, incrs: STEP_INCRS, values: (u, ticks) => ticks.map(fmtStep) };
}

export function yAxis(extra = {}) {
  return { ...AXIS, size: 58, values: (u, ticks) => ticks.map(fmtTick), ...extra };
}

function fmtStep(v) {
  const a = Math.abs(v);
  if (a >= 1e6) return `${+(v / 1e6).toFixed(2)}M`;
  if (a >= 1e4) return `${+(v / 1e3).toFixed(1)}k`;
  return String(Math.round(v * 100) / 100);
}

function fmtTick(v) {
  if (v === null) return '';
  const a = Math.abs(v);
  if (a !== 0 && (a < 1e-3 || a >= 1e5)) return v.toExponential(1);
  return String(+v.toPrecision(4));
}

// Joins per-run columns on one sorted x axis (what uPlot needs):
// parts = [{x: [...], ys: [[...], ...]}, ...] -> [xs, ...ys aligned to xs]
// with null where a run has no point at that x.
export function join(parts) {
  const xs = [...new Set(parts.flatMap((p) => p.x))].sort((a, b) => a - b);
  const at = new Map(xs.map((x, i) => [x, i]));
  const data = [xs];
  for (const p of parts) {
    for (const y of p.ys) {
      const col = new Array(xs.length).fill(null);
      for (let i = 0; i < p.x.length; i++) col[at.get(p.x[i])] = y[i];
      data.push(col);
    }
  }
  return data;
}

// A tooltip element positioned next to the cursor inside `host`.
export function tooltip(host) {
  const el = h('div.tooltip');
  el.hidden = true;
  host.append(el);
  return {
    el,
    show(u, rows) {
      if (!rows.length) { el.hidden = true; return; }
      el.replaceChildren(...rows);
      el.hidden = false;
      const { left, top } = u.cursor;
      const over = u.over.getBoundingClientRect(), box = host.getBoundingClientRect();
      const x = over.left - box.left + left, y = over.top - box.top + top;
      const w = el.offsetWidth, hh = el.offsetHeight, gap = 14;
      // Beside the cursor (right, else left), never across it; above it,
      // so the plot under and below the cursor stays in sight — below only
      // when there is no room above.
      const right = x + gap + w <= box.width - 4;
      el.style.left = `${Math.max(4, right ? x + gap : x - gap - w)}px`;
      const above = y - gap - hh >= 4;
      el.style.top = `${above ? y - gap - hh : Math.min(box.height - hh - 4, y + gap)}px`;
    },
    hide() { el.hidden = true; },
  };
}

// Resizes a chart with its container.
export function autosize(u, container, height) {
  const ro = new ResizeObserver(() => {
    const w = Math.floor(container.clientWidth);
    if (w > 0 && w !== u.width) u.setSize({ width: w, height });
  });
  ro.observe(container);
  return () => ro.disconnect();
}
