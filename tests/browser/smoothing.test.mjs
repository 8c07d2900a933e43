// smoothing.test.mjs — the scalar page's smoothing against TensorBoard's
// debiased EMA, computed by hand; and the outlier quantiles. Plain node,
// no browser: the module has no dependencies.

import path from 'node:path';
import { check, SOURCE, summary } from './lib.mjs';

const { smooth, quantile } = await import(path.join(SOURCE, 'static/scalars/smoothing.js'));
const close = (a, b) => a.length === b.length && a.every((x, i) => (Number.isNaN(b[i]) ? Number.isNaN(x) : Math.abs(x - b[i]) < 1e-12));

// w = 0.5 on [1, 2, 3]: last = 0.5, 1.25, 2.125; debiased by 1 - 0.5^n.
check('debiased EMA by hand', close(smooth([1, 2, 3], 0.5), [1, 1.25 / 0.75, 2.125 / 0.875]), smooth([1, 2, 3], 0.5).join());
check('weight 0 is the raw series', close(smooth([3, 1, 2], 0), [3, 1, 2]));
check('the first point is never pulled to 0', smooth([10, 10.5], 0.99)[0] === 10);
check('a constant series stays exact', smooth([0.1, 0.1, 0.1, 0.1], 0.6).every((v) => v === 0.1));
const withNaN = smooth([1, NaN, 3, Infinity, 5], 0.5);
check('NaN and Inf pass through and do not disturb the average',
  Number.isNaN(withNaN[1]) && withNaN[3] === Infinity && close([withNaN[0], withNaN[2], withNaN[4]], smooth([1, 3, 5], 0.5)), withNaN.join());
check('gaps (null) pass through', smooth([1, null, 3], 0.5)[1] === null);
check('default 0.6 matches TensorBoard on [0, 1]', close(smooth([0, 1], 0.6), [0, 0.4 / (1 - 0.36)]));
check('quantiles of the finite values', quantile([5, 1, NaN, 3, Infinity, 2, 4], 0.5) === 3 && quantile([1, 2], 0.25) === 1.25 && quantile([NaN], 0.5) === null);

process.exit(summary() ? 0 : 1);
