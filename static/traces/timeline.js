// timeline.js — a function's traces on a time axis: one mark per trace
// (the first trace blue, retraces orange, the one that raised the
// retracing warning ringed red), hover for its reason, click to go to its
// row. Traces that come in a burst — the "function in a loop" mistake —
// show as a dense run of marks.

import { h } from '../core/dom.js';

const NS = 'http://www.w3.org/2000/svg';
const W = 1000, H = 34, PAD = 12;

function svg(tag, attrs) {
  const el = document.createElementNS(NS, tag);
  for (const [k, v] of Object.entries(attrs)) el.setAttribute(k, String(v));
  return el;
}

const span = (s) => (s < 1 ? `${Math.round(s * 1000)} ms` : s < 120 ? `${s.toFixed(1)} s` : `${(s / 60).toFixed(1)} min`);

export function timeline(traces, onPick) {
  const t0 = Math.min(...traces.map((t) => t.wall)), t1 = Math.max(...traces.map((t) => t.wall));
  const x = (w) => (t1 > t0 ? PAD + ((w - t0) / (t1 - t0)) * (W - 2 * PAD) : W / 2);
  const root = svg('svg', { viewBox: `0 0 ${W} ${H}`, class: 'trace-timeline', preserveAspectRatio: 'none', role: 'img',
    'aria-label': `${traces.length} traces over ${span(t1 - t0)}` });
  root.append(svg('line', { x1: PAD, x2: W - PAD, y1: H / 2, y2: H / 2, class: 'axis' }));
  for (const t of traces) {
    const mark = svg('circle', { cx: x(t.wall), cy: H / 2, r: t.warning ? 7 : 5,
      class: `mark ${t.is_retrace ? 'retrace' : 'first'}${t.warning ? ' warned' : ''}`, 'data-id': t.id });
    const title = svg('title', {});
    title.textContent = `${t.is_retrace ? 'retrace' : 'first trace'}: ${t.reason}`;
    mark.append(title);
    mark.addEventListener('click', () => onPick(t));
    root.append(mark);
  }
  return h('div.trace-timeline-box', null, root,
    h('div.muted.trace-timeline-span', null, traces.length > 1 ? `${traces.length} traces over ${span(t1 - t0)}` : '1 trace'));
}
