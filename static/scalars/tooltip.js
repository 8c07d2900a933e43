// tooltip.js — the rows of a Scalars chart's tooltip: for each drawn run,
// its point nearest the cursor's x — step, value, smoothed value, and the
// bucket's min and max when downsampled.

import { fmtValue, h } from '../core/dom.js';

// drawn: [{run, s, x, sm}] as buildPlot returns them.
export function tipRows(drawn, xv, { smoothing, colorOf }) {
  const rows = [];
  for (const { run, s, x, sm } of drawn) {
    const i = nearestIndex(x, xv);
    if (i < 0) continue;
    rows.push(h('div.tip-row', null,
      h('span.swatch', { style: { background: colorOf(run) } }),
      h('span.tip-run', null, run),
      h('span.tip-num', null, `step ${s.step[i]}`),
      h('span.tip-num', null, `value ${fmtValue(s.value[i])}`),
      smoothing > 0 ? h('span.tip-num', null, `smoothed ${fmtValue(sm[i])}`) : null,
      s.downsampled ? h('span.tip-num.muted', null, `min ${fmtValue(s.min[i])} max ${fmtValue(s.max[i])}`) : null));
  }
  return rows;
}

// Index of the x value nearest to xv in ascending xs (-1 when more than a
// point's spacing outside them).
function nearestIndex(xs, xv) {
  const n = xs.length;
  if (!n || xv < xs[0] - (xs[1] - xs[0] || 1) || xv > xs[n - 1] + (xs[n - 1] - xs[n - 2] || 1)) return -1;
  let lo = 0, hi = n - 1;
  while (hi - lo > 1) {
    const mid = (lo + hi) >> 1;
    if (xs[mid] <= xv) lo = mid; else hi = mid;
  }
  return Math.abs(xs[lo] - xv) <= Math.abs(xs[hi] - xv) ? lo : hi;
}
