// counted_check.mjs — the dashboard's counts and their nouns, in node
// (static/core/dom.js counted): one of a thing is singular, any other
// number plural, thousands grouped as every figure of the pages is.
import assert from 'node:assert/strict';
import { counted } from '../../static/core/dom.js';

assert.equal(counted(1, 'thread'), '1 thread');
assert.equal(counted(0, 'thread'), '0 threads');
assert.equal(counted(3, 'thread'), '3 threads');
assert.equal(counted(1, 'match', 'matches'), '1 match');
assert.equal(counted(1204, 'match', 'matches'), '1,204 matches');
assert.equal(counted(1, 'point matches', 'points match'), '1 point matches');
assert.equal(counted(2, 'point matches', 'points match'), '2 points match');
assert.equal(counted(10001, 'node'), '10,001 nodes');
console.log('ok - counted');
