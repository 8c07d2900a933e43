// hparams_page.bench.mjs — the HParams page at the scale of a big sweep,
// measured in Debian's chromium (playwright-core): 1,000 runs with 10
// hyperparameters and 5 metrics each (tests/browser/write_sweep.c).
//   bench hparams_1000x10x5_api          GET /api/hparams, the whole table,
//                                        median of 15 requests (ms)
//   bench hparams_1000x10x5_first_paint  navigation to the table, parallel
//                                        coordinates and scatter matrix drawn
//                                        and laid out, median of 3 loads (ms;
//                                        goal <= 1000)
//   bench hparams_1000x10x5_brush        one step of a brush dragged with the
//                                        mouse on the learning-rate axis: the
//                                        rows shown or hidden, both charts
//                                        redrawn, layout included; median of
//                                        the drag's steps (ms; goal <= 100)
//   bench hparams_1000x10x5_brush_max    the slowest of those steps (ms)
// There is no peer in the same run (TensorBoard is not installed), so no
// ratio.
//
//   node bench/hparams_page.bench.mjs [build]

import path from 'node:path';

const build = path.resolve(process.argv[2] || 'build');
process.env.GB_BUILD_DIR = build;
const { BUILD, launchBrowser, requireBrowser, run, startServer, tempDir, until } = await import('../tests/browser/lib.mjs');

requireBrowser('hparams_page bench');
const work = tempDir('gb-hparams-bench-');
const db = path.join(work, 'sweep.db');
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const line = (name, ms) => console.log(`bench ${name} glassbox=${ms.toFixed(1)} unit=ms`);
const NAME = 'hparams_1000x10x5';

console.error('writing 1000 runs ...');
run(path.join(BUILD, 'tests/write_sweep'), [db, '1000', '10', '5'], 600000);
const server = await startServer(db);
const browser = await launchBrowser(path.join(work, 'profile'));

try {
  const api = [];
  for (let i = 0; i < 15; i++) {
    const t0 = performance.now();
    const r = await fetch(new URL('api/hparams', server.url));
    const body = await r.json();
    api.push(performance.now() - t0);
    if (body.runs.length !== 1000) throw new Error(`${body.runs.length} runs`);
  }
  line(`${NAME}_api`, median(api));

  const paints = [], steps = [];
  for (let round = 0; round < 3; round++) {
    const page = await browser.newPage();
    await page.setViewportSize({ width: 1400, height: 900 });
    await page.goto(`${server.url}#hparams`);
    const painted = await until(page, () => document.querySelector('.hp-page')?.dataset.loaded === 'true' &&
      window.__glassbox.hparamsPaintedAt, null, 60000);
    if (!painted) throw new Error('the page never painted');
    paints.push(painted);
    // A brush dragged down the learning-rate axis, 20 mouse steps.
    const box = await page.locator('canvas[data-view="parcoords"]').boundingBox();
    const x = box.x + 56, top = box.y + 46;
    await page.evaluate(() => { window.__glassbox.hparamsFilterMs = []; });
    await page.mouse.move(x, top - 2);
    await page.mouse.down();
    for (let k = 1; k <= 20; k++) await page.mouse.move(x, top + k * 12);
    await page.mouse.up();
    const ms = await page.evaluate(() => window.__glassbox.hparamsFilterMs);
    if (ms.length < 10) throw new Error(`only ${ms.length} brush steps`);
    steps.push(...ms);
    await page.close();
  }
  line(`${NAME}_first_paint`, median(paints));
  line(`${NAME}_brush`, median(steps));
  line(`${NAME}_brush_max`, Math.max(...steps));
} finally {
  await browser.close();
  await server.stop();
}
