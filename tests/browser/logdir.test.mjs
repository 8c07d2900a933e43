// logdir.test.mjs — `glassbox serve --logdir`: many stores as one board,
// driven in Debian's chromium (playwright-core) with the real mouse:
//   - 20 stores of a sweep (tests/write_sweep, one trial per store) and
//     an MPI job's stores, one per rank (examples/fashion_mnist_fit
//     --logdir under mpirun -np 2), each run named by its store's path;
//   - the run list and a chart of a rank's loss equal the API's and the
//     store's own figures;
//   - a store created after the page opened appears on the open page
//     (the delay from the store's creation is printed, never asserted);
//     its chart draws its points; removed, it leaves the list;
//   - a directory of TensorBoard event files made after the page opened
//     is a run named by its path, and records appended later (a torn
//     last one waited for) reach its chart.
// Screenshots: <build>/tests/artifacts/logdir_*.png.

import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { apiJSON, ARTIFACTS, BUILD, check, finishSuite, launchBrowser, requireBrowser, run, startServerWith, tabLoaded, tempDir, until, watchedPage } from './lib.mjs';

requireBrowser('dist_logdir_browser');
const started = Date.now();
const work = tempDir('gb-logdir-');
const logdir = path.join(work, 'logs');
fs.mkdirSync(ARTIFACTS, { recursive: true });
fs.mkdirSync(path.join(logdir, 'sweep'), { recursive: true });

// The sweep: trial_00 .. trial_19, one run each (run_000 .. run_019).
const TRIALS = 20;
const trial = (i) => `trial_${String(i).padStart(2, '0')}`;
for (let i = 0; i < TRIALS; i++)
  run(path.join(BUILD, 'tests/write_sweep'), [path.join(logdir, 'sweep', `${trial(i)}.db`), '1', '4', '2', String(i)]);

// The MPI job: every rank writes logs/mpi/mnist/rank_<r>.db.
const mpirun = process.env.GB_MPIRUN;
const flags = (process.env.GB_MPIRUN_FLAGS || '').split(' ').filter(Boolean);
execFileSync(mpirun, [...flags, '-np', '2', path.join(BUILD, 'examples/fashion_mnist_fit'),
  '--epochs', '1', '--limit', '2560', '--batch', '128', '--verbose', '0', '--logdir', path.join(logdir, 'mpi'), '--run', 'mnist'],
{ timeout: 180000, stdio: ['ignore', 'pipe', 'pipe'] });

const sweepRuns = [...Array(TRIALS).keys()].map((i) => `sweep/${trial(i)}/run_${String(i).padStart(3, '0')}`);
// Rank 0's store also holds every rank's step timings (runs mnist/rank_<r>).
const rankRuns = ['mpi/mnist/rank_0/mnist', 'mpi/mnist/rank_0/mnist/rank_0', 'mpi/mnist/rank_0/mnist/rank_1', 'mpi/mnist/rank_1/mnist'];
const server = await startServerWith(['--logdir', logdir]);
const browser = await launchBrowser(path.join(work, 'profile'));
const { page, errors } = await watchedPage(browser);
const shot = (name) => page.screenshot({ path: path.join(ARTIFACTS, `logdir_${name}.png`) });
const listed = () => page.$$eval('#run-list .run', (l) => l.map((x) => x.dataset.run));

async function everyStore() {
  const api = (await apiJSON(server, 'runs')).runs.map((r) => r.name);
  check('api: every store\'s runs, named by path', JSON.stringify(api) === JSON.stringify([...rankRuns, ...sweepRuns]), api.join());
  check('the MPI stores exist, one per rank', ['rank_0.db', 'rank_1.db'].every((f) => fs.existsSync(path.join(logdir, 'mpi/mnist', f))));
  await page.goto(`${server.url}#scalars`);
  check('scalars: tab loads', await tabLoaded(page, 'scalars', 15000));
  const runs = await until(page, (n) => { const l = [...document.querySelectorAll('#run-list .run')].map((x) => x.dataset.run); return l.length === n ? l : null; }, api.length, 10000);
  check('page: the run list is the API\'s', JSON.stringify(runs) === JSON.stringify(api), String(runs));

  // A rank's loss: the chart's last point against the store's series.
  const series = await apiJSON(server, 'scalars/series', { run: 'mpi/mnist/rank_1/mnist', tag: 'epoch/loss' });
  const series0 = await apiJSON(server, 'scalars/series', { run: 'mpi/mnist/rank_0/mnist', tag: 'epoch/loss' });
  check('api: rank 1 recorded its epoch loss in its own store', Array.isArray(series.value) && series.value.length === 1, JSON.stringify(series).slice(0, 300));
  // fit combines the logs over the ranks: both stores hold the same loss.
  check('api: both ranks\' stores hold the same combined loss', series.value?.[0] === series0.value?.[0] && Number.isFinite(series0.value?.[0]),
    `${series.value} vs ${series0.value}`);
  await page.fill('#tag-filter', '^batch/loss$');
  const card = '.card[data-tag="batch/loss"]';
  check('scalars: the loss chart of the ranks is drawn', !!await until(page, (s) => document.querySelector(s)?.dataset.state === 'ready', card, 15000));
  await shot('scalars');
}

// A store made after the page opened: on the page without a reload.
async function storeAppears() {
  await page.fill('#tag-filter', '');
  const late = path.join(logdir, 'late', 'node3.db');
  fs.mkdirSync(path.dirname(late));
  run(path.join(BUILD, 'tests/append_scalar'), [late, 'eval', 'loss', '0', '0.5', '50']);
  const made = Date.now();
  const seen = await until(page, () => !!document.querySelector('#run-list .run[data-run="late/node3/eval"]'), null, 15000);
  const delay = Date.now() - made;
  check('a store made after the page opened appears on it', !!seen);
  console.log(`measured: the new store's run was on the open page ${delay} ms after the store was written`);
  await page.fill('#tag-filter', '^loss$');
  const card = '.card[data-tag="loss"]';
  await page.locator(card).scrollIntoViewIfNeeded();
  const ready = await until(page, (s) => document.querySelector(s)?.dataset.state === 'ready', card, 15000);
  const api = await apiJSON(server, 'scalars/series', { run: 'late/node3/eval', tag: 'loss' });
  check('api: the new store\'s 50 points', api.total_points === 50 && api.value?.length === 50, JSON.stringify(api).slice(0, 200));
  check('page: its chart is drawn', !!ready);
  const box = await page.locator(`${card} .u-over`).boundingBox();
  await page.mouse.move(box.x + box.width * 0.6, box.y + box.height / 2);
  await until(page, (s) => { const t = document.querySelector(`${s} .tooltip`); return t && !t.hidden; }, card, 5000);
  await shot('late_store');

  fs.rmSync(path.dirname(late), { recursive: true });
  const gone = await until(page, () => !document.querySelector('#run-list .run[data-run="late/node3/eval"]'), null, 15000);
  check('a store removed leaves the list', !!gone, String(await listed()));
  await page.fill('#tag-filter', '');
  await shot('after_removal');
  check('no console errors, no failed requests', errors.length === 0, errors.join('\n'));
}

// TensorBoard's event files: a directory of them made after the page
// opened is a run named by its path; records appended later reach the
// open chart; half a record (its writer mid-write) is waited for.
async function eventFiles() {
  const dir = path.join(logdir, 'tb', 'train');
  fs.mkdirSync(dir, { recursive: true });
  const file = path.join(dir, 'events.out.tfevents.1700000000.test');
  const append = (...a) => run(path.join(BUILD, 'tests/append_tfevents'), [file, 'tb/loss', ...a]);
  append('0', '1', '5');   // steps 0..4: 1..5
  const seen = await until(page, () => !!document.querySelector('#run-list .run[data-run="tb/train"]'), null, 15000);
  check('an event file made after the page opened: its directory is a run', !!seen, String(await listed()));
  await page.fill('#tag-filter', '^tb/loss$');
  const card = '.card[data-tag="tb/loss"]';
  const points = (n) => until(page, ([s, k]) => JSON.parse(document.querySelector(s)?.dataset.points || '{}')['tb/train'] === k, [card, n], 15000);
  check('page: its chart draws its 5 points', !!await points(5));
  let api = await apiJSON(server, 'scalars/series', { run: 'tb/train', tag: 'tb/loss' });
  check('api: the event file\'s steps and values', JSON.stringify(api.step) === '[0,1,2,3,4]' && JSON.stringify(api.value) === '[1,2,3,4,5]', JSON.stringify(api).slice(0, 200));

  append('5', '6', '3', '--torn');   // steps 5, 6 whole; step 7 half written
  check('page: records appended later reach the open chart', !!await points(7));
  api = await apiJSON(server, 'scalars/series', { run: 'tb/train', tag: 'tb/loss' });
  check('api: a torn last record is waited for, the rest served', api.total_points === 7 && api.value?.at(-1) === 7, JSON.stringify(api).slice(0, 200));
  append('7', '8');                  // the rest of step 7's record
  check('page: the finished record arrives', !!await points(8));
  api = await apiJSON(server, 'scalars/series', { run: 'tb/train', tag: 'tb/loss' });
  check('api: step 7 is 8', api.step?.at(-1) === 7 && api.value?.at(-1) === 8, JSON.stringify(api).slice(0, 200));
  await shot('tfevents');
  check('no console errors, no failed requests (event files)', errors.length === 0, errors.join('\n'));
}

await finishSuite('dist_logdir_browser', async () => {
  await everyStore();
  await storeAppears();
  await eventFiles();
}, { browser, server, work, started });
