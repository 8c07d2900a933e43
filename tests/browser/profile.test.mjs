// profile.test.mjs — the Profile page on the store examples/profile_input_bound
// writes twice: a slow map behind one prefetch thread (run "serial"), and
// the same work on 16 sequence workers (run "parallel"). The Overview says
// the first is input-bound and the second is not, its numbers the server's;
// the Ops table sorts and filters and totals what the server says; the
// trace viewer shows the training thread waiting in "next batch" while the
// prefetch thread maps (a click on a slice names it), zooms with the wheel
// and W, pans by a drag; the Memory view marks the peak.
// Screenshots: profile-overview-serial.png, profile-overview-parallel.png,
// profile-ops.png, profile-trace.png, profile-trace-zoomed.png, profile-memory.png.

import fs from 'node:fs';
import path from 'node:path';
import { apiJSON, ARTIFACTS, BUILD, check, finishSuite, launchBrowser, requireBrowser, run, startServer, tabLoaded, tempDir, until, watchedPage } from './lib.mjs';

requireBrowser('webui_profile_browser');
const work = tempDir('gb-profile-');
const db = path.join(work, 'profile.db');
fs.mkdirSync(ARTIFACTS, { recursive: true });
const started = Date.now();
const example = path.join(BUILD, 'examples/profile_input_bound');
// 20 ms of preprocessing a batch: several times a step's compute even under
// the sanitizers (about 6 ms there, 2 ms optimized), while 16 workers make
// batches faster than either build eats them.
run(example, ['--db', db, '--run', 'serial', '--steps', '12', '--map-us', '20000'], 120000);
run(example, ['--db', db, '--run', 'parallel', '--steps', '12', '--parallel', '16', '--map-us', '20000'], 120000);

const server = await startServer(db);
const browser = await launchBrowser(path.join(work, 'chromium'));
const { page, errors } = await watchedPage(browser, { width: 1400, height: 1000 });
const api = (p, params) => apiJSON(server, p, params);
const shot = (name) => page.screenshot({ path: path.join(ARTIFACTS, `${name}.png`), fullPage: false });

// Picks a run and waits until the overview shows that run's sentence
// (dataset.run changes at once; the sentence when the run's overview is in).
async function pick(run, sentence) {
  await page.selectOption('#profile-run', run);
  return until(page, ([r, text]) => document.querySelector('.profile-page')?.dataset.run === r &&
    document.querySelector('.profile-bound')?.textContent === text, [run, sentence], 10000);
}

async function main() {
  const serial = await api('profile/overview', { run: 'serial', profile: 1 });
  const parallel = await api('profile/overview', { run: 'parallel', profile: 2 });
  check('store: the slow map is input-bound', serial.bound === 'input' && serial.sentence.startsWith('input-bound: '), serial.sentence);
  // The parallel run's verdict is not asserted: it is a wall-clock race
  // between 16 sleeping workers and the training step, which a loaded
  // machine or a sanitizer build can tip (41 % input wait once under ASan
  // on two busy cores; 0.1 ms of 12 steps' waiting on a quiet one). What
  // the page says for it is still checked against the server below.
  check('store: 12 steps each', serial.steps.length === 12 && parallel.steps.length === 12,
    `${serial.steps.length}, ${parallel.steps.length}`);

  await page.goto(`${server.url}#profile`);
  check('profile: page loads', !!await tabLoaded(page, 'profile', 10000));
  check('overview: the serial run says input-bound, as the server words it', await pick('serial', serial.sentence) &&
    await page.$eval('.profile-bound', (e) => e.textContent) === serial.sentence,
  await page.$eval('.profile-bound', (e) => e.textContent));
  check('overview: a stacked bar chart of the steps', await until(page, () => !!document.querySelector('.profile-chart canvas'), null, 5000));
  await shot('profile-overview-serial');
  check('overview: the parallel run says what it is', await pick('parallel', parallel.sentence) &&
    await page.$eval('.profile-bound', (e) => e.textContent) === parallel.sentence,
  await page.$eval('.profile-bound', (e) => e.textContent));
  await until(page, () => !!document.querySelector('.profile-chart canvas'), null, 5000);
  await shot('profile-overview-parallel');

  // Ops: the server's rows, sorted by a header click, filtered by typing.
  await pick('serial', serial.sentence);
  await page.click('.profile-tab[data-view="ops"]');
  const ops = await api('profile/ops', { run: 'serial', profile: 1, by: 'type' });
  check('ops: a row per op type', await until(page, (n) => document.querySelectorAll('.profile-op').length === n, ops.ops.length, 5000),
    `${await page.$$eval('.profile-op', (r) => r.length)} of ${ops.ops.length}`);
  check('ops: largest self time first', await page.$eval('.profile-op', (r) => r.dataset.key) === ops.ops[0].key);
  await page.click('th[data-sort="calls"]');
  const sortedByCalls = () => {
    const c = [...document.querySelectorAll('.profile-op td:nth-child(2)')].map((x) => Number(x.textContent));
    return document.querySelector('th[data-sort="calls"]')?.classList.contains('desc') && c.every((v, i) => i === 0 || c[i - 1] >= v);
  };
  check('ops: sorted by calls on a click', await until(page, sortedByCalls, null, 5000),
    (await page.$$eval('.profile-op td:nth-child(2)', (c) => c.map((x) => x.textContent))).join(','));
  await page.click('.profile-filter');
  await page.keyboard.type('MatMul');
  check('ops: the filter keeps MatMul', await until(page, () => [...document.querySelectorAll('.profile-op')].every((r) => r.dataset.key === 'MatMul') &&
    document.querySelectorAll('.profile-op').length === 1, null, 5000));
  await page.click('.profile-by[data-by="name"]');
  check('ops: by name, linked to the Graphs page where traced', await until(page, () => document.querySelectorAll('.profile-op').length > 1, null, 5000));
  await shot('profile-ops');

  // Trace: both threads, the training thread waiting on "next batch".
  await page.click('.profile-tab[data-view="trace"]');
  check('trace: first paint', await until(page, () => document.querySelector('.profile-trace')?.dataset.state === 'ready', null, 10000));
  const status = await page.$eval('.trace-status', (e) => e.textContent);
  check('trace: training and prefetch tracks', /on 2 threads/.test(status), status);
  await shot('profile-trace');
  // Zoom on the first step's wait: the canvas's left part, where the
  // training thread waits while the prefetch thread maps.
  const box = await page.$eval('.trace-canvas', (c) => { const r = c.getBoundingClientRect(); return { x: r.x, y: r.y, w: r.width, h: r.height }; });
  const frames = () => page.$eval('.profile-trace', (e) => Number(e.dataset.frames));
  let before = await frames();
  await page.mouse.move(box.x + 160, box.y + 40);
  await page.mouse.wheel(0, -600);
  check('trace: the wheel zooms (a new frame)', await until(page, (b) => Number(document.querySelector('.profile-trace').dataset.frames) > b, before, 5000));
  const span = () => page.evaluate(() => window.__profileTrace.t1 - window.__profileTrace.t0);
  const zoomed = await span();
  before = await frames();
  await page.mouse.click(box.x + 400, box.y + 100);
  await page.keyboard.press('w');
  check('trace: W zooms in further', await until(page, (s) => window.__profileTrace.t1 - window.__profileTrace.t0 < s, zoomed, 5000));
  const t0 = await page.evaluate(() => window.__profileTrace.t0);
  await page.mouse.move(box.x + 600, box.y + 60);
  await page.mouse.down();
  await page.mouse.move(box.x + 500, box.y + 60, { steps: 5 });
  await page.mouse.up();
  check('trace: a drag pans', await until(page, (a) => window.__profileTrace.t0 > a, t0, 5000));
  // Back out to the whole capture and click the training thread's first
  // wait for the next batch, where the server's trace has it.
  for (let i = 0; i < 30; i++) await page.keyboard.press('s');
  const page0 = await api('profile/trace', { run: 'serial', profile: 1 });
  const ev = page0.events, str = page0.strings;
  const first = ev.start.map((s, i) => i).filter((i) => str[ev.kind[i]] === 'input_wait' && page0.threads[ev.thread[i]] === 'training')
    .sort((a, b) => ev.dur[b] - ev.dur[a])[0];
  check('trace: back to the whole capture', await until(page, (d) => Math.abs(window.__profileTrace.t1 - window.__profileTrace.t0 - d) < 1e-6 &&
    window.__profileTrace.t0 === 0, page0.duration_us, 5000));
  const plotW = box.w - 150;
  const x = box.x + 150 + ((ev.start[first] + ev.dur[first] / 2) / page0.duration_us) * plotW;
  await page.mouse.click(x, box.y + 22 + 9);
  check('trace: a click on the training thread names its wait for the next batch',
    await until(page, () => document.querySelector('.trace-details')?.dataset.name === 'next batch', null, 5000),
    await page.$eval('.trace-details', (e) => e.textContent));
  // Zoom on that wait: the prefetch thread is mapping the batch meanwhile.
  await page.mouse.move(x, box.y + 40);
  await page.mouse.wheel(0, -400);
  await page.waitForTimeout(400);
  await shot('profile-trace-zoomed');

  await page.click('.profile-tab[data-view="memory"]');
  const mem = await api('profile/memory', { run: 'serial', profile: 1 });
  check('memory: the peak as the server has it', await until(page, () => !!document.querySelector('.profile-memory .profile-bound'), null, 5000) &&
    (await page.$eval('.profile-memory .profile-bound', (e) => e.textContent)).includes(`step ${mem.peak.step}`));
  await until(page, () => !!document.querySelector('.profile-memory canvas'), null, 5000);
  await shot('profile-memory');
  check('no page errors', errors.length === 0, errors.join('\n'));
}

await finishSuite('webui_profile_browser', main, { browser, server, work, started });
