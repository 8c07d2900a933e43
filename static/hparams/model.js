// model.js — the HParams page's data: one row per run of /api/hparams, a
// column per hyperparameter and metric, and the filters every view shares
// (the table's per-column filters and the parallel coordinates' brushes):
// a run is shown when it passes them all.
//
// A column: {key, kind: 'hparam'|'metric', name, label, numeric, log,
// higherIsBetter, values: [category...] (non-numeric)}. A metric's value
// is the run's last ("final"), its best (max when higher is better, else
// min), or its last at or before a chosen step, as the page's mode says. Numeric columns whose values are
// all positive and span two decades or more get a log scale.

import { num } from '../core/dom.js';

export const STATUS_LABEL = {
  running: 'running', done: 'done', failed: 'failed',
  killed: 'killed — not finished', '': 'unknown',
};

export class Model {
  constructor() {
    this.columns = [];
    this.runs = [];                 // [{name, status, values: Map(key -> value)}]
    this.mode = 'final';            // or 'best', or 'step' (at this.step)
    this.step = 0;
    this.filters = new Map();       // key -> {lo, hi} (numbers) or {text} (a table filter)
    this.brushes = new Map();       // key -> {lo, hi}: a parallel-coordinates brush
    this.raw = null;
  }

  // Takes a new /api/hparams answer; returns true when the columns changed.
  load(data) {
    this.raw = data;
    const before = this.columns.map((c) => c.key).join('\n');
    const cols = data.hparams.map((p) => ({
      key: `h:${p.name}`, kind: 'hparam', name: p.name, label: p.display_name || p.name,
      declared: p,
    }));
    const metrics = data.metrics.map((m, i) => ({
      key: `m:${m.tag}`, kind: 'metric', name: m.tag, label: m.display_name || m.tag,
      higherIsBetter: m.higher_is_better, index: i,
    }));
    this.columns = [...cols, ...metrics];
    this.rebuild();
    return before !== this.columns.map((c) => c.key).join('\n');
  }

  // Values of every run for the mode; column scales from them.
  rebuild() {
    const data = this.raw;
    if (!data) return;
    this.runs = data.runs.map((r) => {
      const values = new Map();
      for (const c of this.columns) {
        if (c.kind === 'hparam') {
          const v = r.hparams[c.name];
          values.set(c.key, v === undefined ? null : typeof v === 'number' || v === 'NaN' ? num(v) : v);
        } else {
          const m = r.metrics[c.index];
          values.set(c.key, m ? this.metricValue(c, m) : null);
        }
      }
      return { name: r.name, status: r.status, values };
    });
    for (const c of this.columns) this.scale(c);
  }

  metricValue(c, m) {
    const [last, , min, max, , at] = m.map(num);
    if (this.mode === 'best') return c.higherIsBetter ? max : min;
    if (this.mode === 'step') return at ?? null;
    return last;
  }

  scale(c) {
    const vs = this.runs.map((r) => r.values.get(c.key)).filter((v) => v !== null && v !== undefined);
    c.numeric = vs.every((v) => typeof v === 'number');
    if (c.numeric) {
      const fin = vs.filter((v) => Number.isFinite(v));
      const d = c.declared;
      let lo = Math.min(...fin), hi = Math.max(...fin);
      if (d?.domain === 'interval') { lo = Math.min(lo, num(d.min)); hi = Math.max(hi, num(d.max)); }
      if (d?.domain === 'discrete') for (const v of d.values) if (typeof v === 'number') { lo = Math.min(lo, v); hi = Math.max(hi, v); }
      if (!Number.isFinite(lo)) { lo = 0; hi = 1; }
      if (lo === hi) { lo -= 0.5; hi += 0.5; }
      c.lo = lo;
      c.hi = hi;
      c.log = lo > 0 && hi / lo >= 100;
      c.values = null;
    } else {
      const declared = c.declared?.domain === 'discrete' ? c.declared.values.map(String) : [];
      c.values = [...new Set([...declared, ...vs.map(String)])];
      if (!declared.length) c.values.sort();
      c.log = false;
    }
  }

  // Position of v on column c in [0, 1] (bottom 0), or null.
  position(c, v) {
    if (v === null || v === undefined) return null;
    if (!c.numeric) {
      const i = c.values.indexOf(String(v));
      return c.values.length === 1 ? 0.5 : i / (c.values.length - 1);
    }
    if (!Number.isFinite(v)) return null;
    if (c.log) return v <= 0 ? null : (Math.log(v) - Math.log(c.lo)) / (Math.log(c.hi) - Math.log(c.lo));
    return (v - c.lo) / (c.hi - c.lo);
  }

  // The value at position p in [0, 1] of a numeric column.
  valueAt(c, p) {
    if (c.log) return Math.exp(Math.log(c.lo) + p * (Math.log(c.hi) - Math.log(c.lo)));
    return c.lo + p * (c.hi - c.lo);
  }

  // Whether run r passes every filter and brush.
  passes(r) {
    for (const [key, b] of this.brushes) {
      const c = this.column(key);
      const p = c && this.position(c, r.values.get(key));
      if (p === null || p === undefined || p < b.lo || p > b.hi) return false;
    }
    for (const [key, f] of this.filters) if (!matches(f, r.values.get(key))) return false;
    return true;
  }

  column(key) { return this.columns.find((c) => c.key === key); }
  shown() { return this.runs.filter((r) => this.passes(r)); }
}

// A table filter: "0.001", "1e-3..1e-2", ">=0.5", "<0.2", or text (a
// case-insensitive substring) for strings.
export function parseFilter(text) {
  const t = text.trim();
  if (!t) return null;
  let m = t.match(/^(-?[\d.eE+-]+)?\s*\.\.\s*(-?[\d.eE+-]+)?$/);
  if (m && (m[1] || m[2])) return { text: t, lo: m[1] ? Number(m[1]) : -Infinity, hi: m[2] ? Number(m[2]) : Infinity };
  m = t.match(/^(>=|<=|>|<|=)\s*(-?[\d.eE+-]+)$/);
  if (m) {
    const v = Number(m[2]);
    const ops = { '>=': [v, Infinity], '>': [v, Infinity, true], '<=': [-Infinity, v], '<': [-Infinity, v, false, true], '=': [v, v] };
    const [lo, hi, openLo, openHi] = ops[m[1]];
    return { text: t, lo, hi, openLo, openHi };
  }
  if (!Number.isNaN(Number(t))) return { text: t, lo: Number(t), hi: Number(t) };
  return { text: t, sub: t.toLowerCase() };
}

function matches(f, v) {
  if (f.sub !== undefined) return v !== null && String(v).toLowerCase().includes(f.sub);
  if (typeof v !== 'number' || Number.isNaN(v)) return false;
  if (f.openLo ? v <= f.lo : v < f.lo) return false;
  if (f.openHi ? v >= f.hi : v > f.hi) return false;
  return true;
}

// A colour for t in [0, 1]: viridis, in 64 steps (no eye tells more
// apart, and few distinct colours let the charts fill a colour at once).
const VIRIDIS = ['#440154', '#482878', '#3e4989', '#31688e', '#26828e', '#1f9e89', '#35b779', '#6ece58', '#b5de2b', '#fde725'];
const RAMP = Array.from({ length: 64 }, (_, i) => viridis(i / 63));
export function ramp(t) {
  if (t === null || t === undefined || Number.isNaN(t)) return '#9aa0a6';
  return RAMP[Math.round(Math.max(0, Math.min(1, t)) * 63)];
}

function viridis(t) {
  const x = t * (VIRIDIS.length - 1);
  const i = Math.floor(x), f = x - i;
  if (i >= VIRIDIS.length - 1) return VIRIDIS[VIRIDIS.length - 1];
  const a = parseInt(VIRIDIS[i].slice(1), 16), b = parseInt(VIRIDIS[i + 1].slice(1), 16);
  const mix = (s) => Math.round(((a >> s) & 255) * (1 - f) + ((b >> s) & 255) * f);
  return `rgb(${mix(16)},${mix(8)},${mix(0)})`;
}

// The label of the tick at position p of numeric column c: three
// significant digits, or as many more as tell ticks a quarter of the axis
// apart. A column of one value spans it +-0.5: 127.5 to 128.5 read "128"
// five times at three digits, and its ends "128" and "129".
export function tickLabel(c, p, model) {
  const v = model.valueAt(c, p);
  const a = Math.abs(v);
  if (a !== 0 && (a < 1e-2 || a >= 1e5)) return v.toExponential(0);
  const quarter = (c.hi - c.lo) / 4;
  const need = c.log || !(quarter > 0) ? 0 : Math.ceil(Math.log10(Math.max(Math.abs(c.lo), Math.abs(c.hi)) / quarter)) + 1;
  return String(+v.toPrecision(Math.min(15, Math.max(3, need))));
}
