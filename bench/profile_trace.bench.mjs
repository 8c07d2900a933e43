// profile_trace.bench.mjs — the Profile page's trace viewer at 1,000,000
// slices, measured in Debian's chromium (playwright-core). The store is
// one capture of examples/profile_input_bound grown to a million events
// (rows copied in SQL, each copy shifted in time: 4 threads of real op
// names and waits), served by `glassbox serve`.
//   bench trace_viewer_1m_first_paint  the Trace tab clicked to the first
//                                      page of slices drawn (ms; goal <= 1500)
//   bench trace_viewer_1m_loaded       ... to every slice loaded and drawn (ms)
//   bench trace_viewer_1m_zoom         a wheel zoom to its frame drawn, the
//                                      whole capture in view (ms; goal <= 100),
//                                      median of 15
//   bench trace_viewer_1m_frame        the worker's level-of-detail pass for
//                                      that frame (ms), median
// No peer in the same run (Perfetto's UI is not installed).
//
//   node bench/profile_trace.bench.mjs [build]

import { execFileSync } from 'node:child_process';
import path from 'node:path';

const build = path.resolve(process.argv[2] || 'build');
process.env.GB_BUILD_DIR = build;
const { launchBrowser, requireBrowser, run, startServer, tempDir, until } = await import('../tests/browser/lib.mjs');

requireBrowser('profile_trace bench');
const N = 1000000;
const work = tempDir('gb-trace-bench-');
const db = path.join(work, 'p.db');
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const line = (name, ms) => console.log(`bench ${name} glassbox=${ms.toFixed(1)} unit=ms`);

run(path.join(build, 'examples/profile_input_bound'), ['--db', db, '--run', 'big', '--steps', '20', '--map-us', '2000'], 120000);
// Copies of the capture's events, each shifted past the last, on 4 threads.
const base = Number(execFileSync('sqlite3', [db, 'SELECT count(*) FROM profile_events WHERE profile_id = 1']).toString());
const span = Number(execFileSync('sqlite3', [db, 'SELECT duration_us FROM profiles WHERE id = 1']).toString());
const copies = Math.ceil(N / base);
execFileSync('sqlite3', [db, `
  WITH RECURSIVE k(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM k WHERE i < ${copies - 1})
  INSERT INTO profile_events(profile_id, kind, thread, step, start_us, dur_us, name, op_type, function, backward, shapes, flops, bytes, live_bytes)
    SELECT 1, kind, (thread + 2 * (i % 2)), step + 20 * (i / 2), start_us + ${span} * (i / 2), dur_us, name, op_type, function, backward, shapes, flops, bytes, live_bytes
    FROM k, profile_events WHERE profile_id = 1 AND id <= (SELECT min(id) FROM profile_events WHERE profile_id = 1) + ${base} - 1
    ORDER BY (thread + 2 * (i % 2)), i, profile_events.id LIMIT ${N - base};
  UPDATE profiles SET record_count = (SELECT count(*) FROM profile_events WHERE profile_id = 1),
    duration_us = (SELECT max(start_us + dur_us) FROM profile_events WHERE profile_id = 1),
    threads = '["training","prefetch","training (copy)","prefetch (copy)"]' WHERE id = 1;`]);
const total = Number(execFileSync('sqlite3', [db, 'SELECT record_count FROM profiles WHERE id = 1']).toString());

const server = await startServer(db);
const browser = await launchBrowser(path.join(work, 'chromium'));
try {
  const page = await browser.newPage();
  await page.setViewportSize({ width: 1400, height: 900 });
  await page.goto(`${server.url}#profile`);
  await until(page, () => document.querySelector('.profile-page')?.dataset.loaded === 'true', null, 30000);
  const t0 = Date.now();
  await page.click('.profile-tab[data-view="trace"]');
  if (!await until(page, () => document.querySelector('.profile-trace')?.dataset.state === 'ready', null, 60000)) throw new Error('never drawn');
  const firstPaint = Date.now() - t0;
  if (!await until(page, (n) => window.__profileTrace?.meta?.count === n && !window.__profileTrace.pending, total, 120000)) throw new Error('never loaded');
  const loaded = Date.now() - t0;
  const box = await page.$eval('.trace-canvas', (c) => { const r = c.getBoundingClientRect(); return { x: r.x, y: r.y }; });
  const zooms = [], passes = [];
  for (let i = 0; i < 15; i++) {
    // out to the whole capture, then one wheel notch in: a frame of all 1M
    await page.evaluate(() => { const s = window.__profileTrace; s.t0 = 0; s.t1 = s.meta.duration; });
    await page.mouse.move(box.x + 300 + 40 * i, box.y + 40);
    const frames = await page.$eval('.profile-trace', (e) => Number(e.dataset.frames));
    const start = await page.evaluate(() => performance.now());
    await page.mouse.wheel(0, -100);
    await until(page, (f) => Number(document.querySelector('.profile-trace').dataset.frames) > f && !window.__profileTrace.pending, frames, 10000);
    zooms.push(await page.evaluate((s) => performance.now() - s, start));
    passes.push(await page.evaluate(() => window.__profileTrace.lastFrameMs));
  }
  console.error(`trace viewer: ${total} slices`);
  line('trace_viewer_1m_first_paint', firstPaint);
  line('trace_viewer_1m_loaded', loaded);
  line('trace_viewer_1m_zoom', median(zooms));
  line('trace_viewer_1m_frame', median(passes));
} finally {
  await browser.close();
  await server.stop();
}
