// straggler.test.mjs — the straggler view: the MLP example trains on 2
// ranks under mpirun with rank 1 slowed on purpose (GB_DIST_SLOW_RANK=1,
// 4 ms a step); rank 0 stores every rank's step, allreduce and compute
// times as runs straggler/rank_<r>. The store must show rank 1 computing
// longer and rank 0 waiting longer, and the Scalars page, filtered to
// dist/, must overlay both ranks in each chart. Screenshot:
// <build>/tests/artifacts/straggler-scalars.png.

import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { apiJSON, ARTIFACTS, BUILD, check, finishSuite, launchBrowser, requireBrowser, startServer, tempDir, until, watchedPage } from './lib.mjs';

requireBrowser('straggler_browser');
const started = Date.now();
const work = tempDir('gb-straggler-');
fs.mkdirSync(ARTIFACTS, { recursive: true });
const db = path.join(work, 'straggler.db');
const SLOW_MS = 4;

// mpirun and its loopback flags come from the build (tests/dist.cmake).
const mpirun = process.env.GB_MPIRUN;
const flags = (process.env.GB_MPIRUN_FLAGS || '').split(' ').filter(Boolean);
execFileSync(mpirun, [...flags, '-np', '2', path.join(BUILD, 'examples/fashion_mnist_mlp'),
  '--epochs', '1', '--limit', '12800', '--batch', '64', '--db', db, '--run', 'straggler'],
{ timeout: 120000, stdio: ['ignore', 'pipe', 'pipe'],
  env: { ...process.env, GB_DIST_SLOW_RANK: '1', GB_DIST_SLOW_MS: String(SLOW_MS) } });

const median = (v) => { const s = [...v].sort((a, b) => a - b); return s[Math.floor(s.length / 2)]; };

const server = await startServer(db);
const browser = await launchBrowser(path.join(work, 'profile'));

async function main() {
  const series = async (run, tag) => (await apiJSON(server, 'scalars/series', { run, tag })).value || [];
  const compute = [await series('straggler/rank_0', 'dist/compute_ms'), await series('straggler/rank_1', 'dist/compute_ms')];
  const wait = [await series('straggler/rank_0', 'dist/allreduce_ms'), await series('straggler/rank_1', 'dist/allreduce_ms')];
  check('store: every timed step of both ranks', compute[0].length === 99 && compute[1].length === 99,
    `${compute[0].length}, ${compute[1].length}`);
  const slower = median(compute[1]) - median(compute[0]), waits = median(wait[0]) - median(wait[1]);
  check('store: the slowed rank computes longer', slower > SLOW_MS * 0.75, `${slower.toFixed(2)} ms`);
  check('store: the other rank waits for it in the allreduce', waits > SLOW_MS * 0.75, `${waits.toFixed(2)} ms`);

  const { page, errors } = await watchedPage(browser, { width: 1400, height: 1000 });
  await page.goto(`${server.url}#scalars`);
  check('page: loads', await until(page, () => window.__glassbox?.ready, null, 10000));
  await page.fill('#tag-filter', '^dist/');
  const tags = ['dist/allreduce_ms', 'dist/compute_ms', 'dist/step_time_ms'];
  const cards = await until(page, (want) => want.every((t) => document.querySelector(`.card[data-tag="${t}"]`)?.dataset.runs === '2'), tags, 15000);
  check('page: a chart per dist/ tag, each overlaying rank_0 and rank_1', !!cards);
  const legend = await page.$$eval('.card[data-tag="dist/compute_ms"] .legend-run', (els) => els.map((e) => e.textContent).sort().join(','));
  check('page: the legend names the ranks', legend === 'straggler/rank_0,straggler/rank_1', legend);
  await page.screenshot({ path: path.join(ARTIFACTS, 'straggler-scalars.png'), fullPage: true });
  check('page: no console errors', errors.length === 0, errors.join(' | '));
}

await finishSuite('straggler', main, { browser, server, work, started });
