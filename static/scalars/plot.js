// plot.js — what a Scalars card hands uPlot, worked out from its series
// without touching the page: per run a raw line (faint when smoothing) and
// a smoothed one — each series smoothed once per draw — plus the min/max
// envelope where the server downsampled; the columns joined on one x axis;
// and the y range for "ignore outliers".

import { alpha, join } from '../core/chart.js';
import { quantile, smooth } from './smoothing.js';

// parts: [{run, s (series), x (x values)}]; colorOf(run) -> '#rrggbb'.
// Returns {series, bands, data, drawn: [{run, s, x, sm}], yRange}.
export function buildPlot(parts, settings, colorOf) {
  const series = [{}], bands = [], cols = [], drawn = [], lines = [];
  for (const p of parts) {
    const run = runLines(p, settings, colorOf(p.run));
    for (const band of run.bands) bands.push({ ...band, series: band.series.map((i) => series.length + i) });
    series.push(...run.series);
    cols.push({ x: p.x, ys: run.ys });
    lines.push(...run.ys.slice(0, 2));
    drawn.push({ ...p, sm: run.smoothed });
  }
  return { series, bands, data: join(cols), drawn, yRange: yRangeFor(lines, settings) };
}

// One run's uPlot series and y columns; band indices count from its first.
function runLines({ run, s }, { smoothing: w, log }, color) {
  const clean = (v) => (v === null || !Number.isFinite(v) || (log && v <= 0) ? null : v);
  const smoothed = smooth(s.value, w);
  // A sparse series gets dots, or a single point would be invisible.
  const dots = { show: s.step.length <= 40, size: 6, fill: color };
  const out = {
    smoothed,
    ys: [s.value.map(clean), smoothed.map(clean)],
    series: [
      { label: `${run} (raw)`, stroke: alpha(color, w > 0 ? 0.25 : 1), width: 1, spanGaps: true, points: w > 0 ? { show: false } : dots },
      { label: run, stroke: color, width: 1.75, spanGaps: true, show: w > 0, points: dots },
    ],
    bands: [],
  };
  if (s.downsampled) {
    out.ys.push(s.max.map(clean), s.min.map(clean));
    const edge = (label) => ({ label: `${run} ${label}`, stroke: 'transparent', points: { show: false }, spanGaps: true });
    out.series.push(edge('max'), edge('min'));
    out.bands.push({ series: [2, 3], fill: alpha(color, 0.14) });
  }
  return out;
}

// All finite values (null: uPlot's own range), or with "ignore outliers"
// the 5th..95th percentile band of the raw and smoothed lines, padded.
function yRangeFor(lines, { outliers, log }) {
  if (!outliers) return null;
  const vals = lines.flat();
  const lo = quantile(vals, 0.05), hi = quantile(vals, 0.95);
  if (lo === null) return null;
  const pad = (hi - lo) * 0.1 || Math.abs(hi) * 0.1 || 1;
  return [log ? Math.max(lo - pad, lo / 2) : lo - pad, hi + pad];
}

// The x values of a series for the axis mode; t0 is the first wall time of
// the run's whole series (relative time stays put when zoomed).
export function xValues(s, mode, t0) {
  if (mode === 'step') return s.step;
  return strictlyIncreasing(mode === 'wall' ? s.wall : s.wall.map((w) => w - t0));
}

// Points written within the same microsecond would share an x value and
// hide each other on a time axis: nudge them apart by a microsecond.
function strictlyIncreasing(xs) {
  const out = xs.slice();
  for (let i = 1; i < out.length; i++) if (out[i] <= out[i - 1]) out[i] = out[i - 1] + 1e-6;
  return out;
}
