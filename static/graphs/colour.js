// colour.js — what a box's colour says, and the legend that says it: op
// type, device, compute time (share of the step, from the profile) or
// output memory. A scope takes the sum of what it holds for time and
// memory; for op type it stays neutral (its box lists its ops instead).

import { h } from '../core/dom.js';

export const MODES = [
  ['op', 'Op type'],
  ['device', 'Device'],
  ['time', 'Compute time'],
  ['memory', 'Output memory'],
];

// Categorical colours (Tableau 20). A category's colour comes from its
// name alone (a hash), never from its rank in one graph: an op type keeps
// its colour on every stage, run and page, so two graphs compare by eye.
// Two types may share a colour; the legend and the pane name them.
const PALETTE = ['#4e79a7', '#a0cbe8', '#f28e2b', '#ffbe7d', '#59a14f', '#8cd17d', '#b6992d',
  '#f1ce63', '#499894', '#86bcb6', '#e15759', '#ff9d9a', '#79706e', '#bab0ac', '#d37295',
  '#fabfd2', '#b07aa1', '#d4a6c8', '#9d7660', '#d7b5a6'];
const LEGEND_ROWS = 12;

// FNV-1a over the name's UTF-16 units: the same colour everywhere.
export function colourOf(name) {
  let h = 0x811c9dc5;
  for (let i = 0; i < name.length; i++) h = Math.imul(h ^ name.charCodeAt(i), 0x01000193) >>> 0;
  return PALETTE[h % PALETTE.length];
}
const SCOPE = '#eef1f6';
const NO_DATA = '#e9ecef';
const LOW = [255, 245, 230];     // the sequential scale's two ends
const HIGH = [166, 54, 3];

const hex = (rgb) => `#${rgb.map((c) => Math.round(c).toString(16).padStart(2, '0')).join('')}`;
const mix = (t) => hex(LOW.map((a, i) => a + (HIGH[i] - a) * Math.max(0, Math.min(1, t))));

// Black or white text, whichever reads on fill.
export function inkOn(fill) {
  const n = parseInt(fill.slice(1), 16);
  const [r, g, b] = [(n >> 16) & 255, (n >> 8) & 255, n & 255];
  return 0.299 * r + 0.587 * g + 0.114 * b > 150 ? '#1d2330' : '#ffffff';
}

export function fmtBytes(b) {
  if (b < 1024) return `${b} B`;
  const units = ['KiB', 'MiB', 'GiB'];
  let v = b / 1024, u = 0;
  while (v >= 1024 && u < units.length - 1) { v /= 1024; u++; }
  return `${v.toFixed(v < 10 ? 1 : 0)} ${units[u]}`;
}

function ranked(counts) {
  return [...counts].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1)).map(([k]) => k);
}

function categorical(keys, valueOf, title) {
  return {
    fill: (item) => (item.kind === 'group' ? SCOPE : colourOf(valueOf(item))),
    legend: () => h('div.graph-legend', { 'data-mode': title }, h('div.graph-legend-title', null, title),
      ...keys.slice(0, LEGEND_ROWS).map((k) => swatch(colourOf(k), k)),
      keys.length > LEGEND_ROWS ? h('div.muted', null, `and ${keys.length - LEGEND_ROWS} more (each its own colour)`) : null),
  };
}

function swatch(colour, text) {
  return h('div.graph-legend-row', null, h('span.graph-legend-swatch', { style: { background: colour } }), text);
}

function gradient(title, stops, note) {
  return h('div.graph-legend', { 'data-mode': title }, h('div.graph-legend-title', null, title),
    h('div.graph-legend-ramp', { style: { background: `linear-gradient(to right, ${mix(0)}, ${mix(0.5)}, ${mix(1)})` } }),
    h('div.graph-legend-stops', null, ...stops.map((s) => h('span', null, s))),
    note ? swatch(NO_DATA, note) : null);
}

// {fill(item), legend()} for mode over model; total: the profiled step's µs.
export function colourer(mode, model, total) {
  if (mode === 'device') {
    const devices = ranked(new Map(model.nodes.map((n) => [n.device, 1])));
    return categorical(devices, (n) => n.device, 'Device');
  }
  if (mode === 'time') {
    // sqrt: 1% of the step is already visible, 25% is half way.
    const sum = total || model.root.timeUs;
    return {
      fill: (item) => (item.timeUs === null || !sum ? NO_DATA : mix(Math.sqrt(item.timeUs / sum))),
      legend: () => gradient('Compute time (share of the step)', ['0%', '25%', '100%'],
        sum ? 'not profiled' : 'no profile: run with op timing (trace_on profile)'),
    };
  }
  if (mode === 'memory') {
    const max = Math.max(1, ...model.nodes.map((n) => n.bytes));
    const lo = Math.log(64), hi = Math.log(Math.max(max, 128));
    return {
      fill: (item) => (item.bytes ? mix((Math.log(Math.max(item.bytes, 64)) - lo) / (hi - lo)) : NO_DATA),
      legend: () => gradient('Output memory (unknown dims as 1)', ['64 B', fmtBytes(Math.round(Math.sqrt(64 * max))), `${fmtBytes(max)}+`], 'no outputs'),
    };
  }
  return categorical(ranked(model.root.ops), (n) => n.op, 'Op type');
}
