// hparams/ticks_check.mjs — the HParams page's axis ticks, in node: the
// labels the parallel coordinates and the scatter-plot matrix draw at a
// quarter of an axis apart (static/hparams/model.js tickLabel).
import assert from 'node:assert/strict';
import { Model, tickLabel } from '../../static/hparams/model.js';

const model = new Model();
const ticks = (c) => [0, 0.25, 0.5, 0.75, 1].map((p) => tickLabel(c, p, model));

// A column of one value (every run's batch size 128) spans it +-0.5: its
// ticks are those values, not "128" five times and ends of "128" and "129".
assert.deepEqual(ticks({ numeric: true, lo: 127.5, hi: 128.5, log: false }), ['127.5', '127.8', '128', '128.3', '128.5']);
// Three digits where they tell the ticks apart.
assert.deepEqual(ticks({ numeric: true, lo: 0.826, hi: 0.898, log: false }), ['0.826', '0.844', '0.862', '0.88', '0.898']);
assert.deepEqual(ticks({ numeric: true, lo: 32, hi: 128, log: false }), ['32', '56', '80', '104', '128']);
assert.deepEqual(ticks({ numeric: true, lo: -0.5, hi: 0.5, log: false }), ['-0.5', '-0.25', '0', '0.25', '0.5']);
// Small and large values in exponent form; a log axis by its decades.
assert.deepEqual(ticks({ numeric: true, lo: 1e-4, hi: 1e-2, log: true }), ['1e-4', '3e-4', '1e-3', '3e-3', '0.01']);
assert.equal(tickLabel({ numeric: true, lo: 0, hi: 4e5, log: false }, 1, model), '4e+5');
console.log('ok - hparams tick labels');
