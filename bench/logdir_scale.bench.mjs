// logdir_scale.bench.mjs — `glassbox serve --logdir` at the scale of a big
// sweep: 1,000 stores (one run each), 10,000 scalar tags in all, 10^8
// scalar points (one series of 1,000,000, the rest ~9,900 each), plus a
// histogram every 1,000 steps and two images per run
// (tests/browser/write_logdir.c, 2 processes writing).
//   bench logdir_1e8_generate   seconds to write the logdir through the
//                               writer API (s)
//   bench logdir_1e8_open       from starting the server to the first
//                               answers of the run list and the scalar
//                               tag list (every store read once), median
//                               of 3 starts (ms; goal <= 1000)
//   bench logdir_1e8_chart      1,000 points with min/max envelopes of the
//                               1,000,000-point series over steps
//                               100,000..900,000, median of 15 (ms; goal
//                               <= 100)
//   bench logdir_1e8_tags_page  the Scalars page's first paint with 10,000
//                               tags: navigation until its first card's
//                               chart is drawn, median of 3 loads in
//                               chromium (ms; goal <= 1500)
//   bench logdir_1e8_rss        the server's resident memory after all of
//                               the above (MB; goal <= 300), and its peak
//                               (logdir_1e8_rss_peak)
// No peer runs in the same run (TensorBoard is not installed), so no ratio.
// The logdir (about 3 GB) is written into <build>/bench-data/ and removed
// at the end, unless GB_BENCH_KEEP=1 keeps it for the next run (which then
// skips the generation line).
//
//   node bench/logdir_scale.bench.mjs [build]

import fs from 'node:fs';
import path from 'node:path';

const build = path.resolve(process.argv[2] || 'build');
process.env.GB_BUILD_DIR = build;
const { BUILD, launchBrowser, requireBrowser, run, startServerWith, tempDir, until } = await import('../tests/browser/lib.mjs');

requireBrowser('logdir_scale bench');
const NAME = 'logdir_1e8';
const RUNS = 1000, TAGS = 10, POINTS = 100000000, LONG = 1000000;
const logdir = path.join(build, 'bench-data', NAME);
const keep = process.env.GB_BENCH_KEEP === '1';
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const line = (name, v, unit) => console.log(`bench ${name} glassbox=${v.toFixed(1)} unit=${unit}`);

if (!fs.existsSync(path.join(logdir, 'group_09', `run_${String(RUNS - 1).padStart(4, '0')}.db`))) {
  fs.rmSync(logdir, { recursive: true, force: true });
  fs.mkdirSync(path.dirname(logdir), { recursive: true });
  console.error(`writing ${RUNS} stores, ${RUNS * TAGS} tags, ${POINTS} points into ${logdir} ...`);
  const secs = Number(run(path.join(BUILD, 'tests/write_logdir'), [logdir, String(RUNS), String(TAGS), String(POINTS), String(LONG)], 3600000));
  line(`${NAME}_generate`, secs, 's');
} else {
  console.error(`reusing ${logdir}, kept by an earlier run (GB_BENCH_KEEP=1)`);
}

const rssOf = (pid) => {
  const s = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (k) => Number(s.match(new RegExp(`${k}:\\s+(\\d+)`))[1]);
  return { rss: kb('VmRSS') / 1024, peak: kb('VmHWM') / 1024 };
};

const opens = [];
let server;
for (let i = 0; i < 3; i++) {
  if (server) await server.stop();
  const t0 = performance.now();
  server = await startServerWith(['--logdir', logdir]);
  const [runs, tags] = await Promise.all([
    fetch(new URL('api/runs', server.url)).then((r) => r.json()),
    fetch(new URL('api/scalars/tags', server.url)).then((r) => r.json())]);
  opens.push(performance.now() - t0);
  const ntags = Object.values(tags.runs).reduce((n, l) => n + l.length, 0);
  if (runs.runs.length !== RUNS || ntags !== RUNS * TAGS) throw new Error(`${runs.runs.length} runs, ${ntags} tags`);
}
line(`${NAME}_open`, median(opens), 'ms');

const charts = [];
const q = new URLSearchParams({ run: 'group_00/run_0000/train', tag: 'r0000/m00', points: '1000', min_step: '100000', max_step: '900000' });
for (let i = 0; i < 15; i++) {
  const t0 = performance.now();
  const body = await fetch(new URL(`api/scalars/series?${q}`, server.url)).then((r) => r.json());
  charts.push(performance.now() - t0);
  if (!body.downsampled || body.step.length > 1000 || body.step.length < 900 || body.total_points !== 800001)
    throw new Error(`series: ${JSON.stringify({ downsampled: body.downsampled, rows: body.step?.length, total: body.total_points })}`);
}
line(`${NAME}_chart`, median(charts), 'ms');

const work = tempDir('gb-logdir-bench-');
const browser = await launchBrowser(path.join(work, 'profile'));
try {
  const page = browser.pages()[0] || await browser.newPage();
  const paints = [];
  for (let i = 0; i < 3; i++) {
    await page.goto('about:blank');   /* a new load each time, not a jump within the page */
    const t0 = performance.now();
    await page.goto(`${server.url}#scalars`);
    const ok = await until(page, () => !!document.querySelector('.card[data-tag][data-state="ready"] .u-over'), null, 120000);
    paints.push(performance.now() - t0);
    if (!ok) throw new Error('no chart was drawn');
  }
  const shown = await page.$$eval('.card[data-tag]', (c) => c.length);
  console.error(`the page holds ${shown} card elements for ${RUNS * TAGS} tags`);
  await page.screenshot({ path: path.join(build, 'tests', 'artifacts', 'logdir_1e8_scalars.png') });
  line(`${NAME}_tags_page`, median(paints), 'ms');
  const mem = rssOf(server.pid);
  line(`${NAME}_rss`, mem.rss, 'MB');
  line(`${NAME}_rss_peak`, mem.peak, 'MB');
} finally {
  await browser.close();
  await server.stop();
  fs.rmSync(work, { recursive: true, force: true });
  if (!keep) fs.rmSync(logdir, { recursive: true, force: true });
}
