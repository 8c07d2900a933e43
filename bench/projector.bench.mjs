// projector.bench.mjs — the Projector page measured in Debian's chromium
// (playwright-core, WebGL from SwiftShader: no GPU), on synthetic
// embeddings written by tests/browser/write_embedding (clusters of
// Gaussian points, a metadata column), served by `glassbox serve`.
//   bench projector_50k_first_paint   the Projector tab clicked to the
//                                     first frame of 50,000 x 128 points
//                                     drawn by PCA (ms; goal <= 2000)
//   bench projector_50k_rotate_frame  one frame of the 3D view rotated:
//                                     drawn and finished (ms; goal <= 16),
//                                     median of 60, by the renderer the page
//                                     picks: here the CPU one (splat.js), as
//                                     WebGL is SwiftShader's
//   bench projector_50k_rotate_frame_webgl
//                                     the same with WebGL forced
//                                     (?renderer=webgl): SwiftShader's cost
//   bench tsne_5k                     t-SNE (2D) of 5,000 x 128 points to
//                                     1,000 iterations in the worker (s)
//   bench tsne_5k_longest_task        the longest task of the page's main
//                                     thread meanwhile (ms; goal < 100): a
//                                     frame per worker message (at most one
//                                     each 100 ms), drawn by the CPU renderer.
//                                     With WebGL forced, chromium's long
//                                     animation frame entries show long tasks
//                                     of up to 170 ms with no script of the
//                                     page in them: SwiftShader's work
// No peer in the same run (TensorBoard's projector is not installed).
//
//   node bench/projector.bench.mjs [build]

import path from 'node:path';

const build = path.resolve(process.argv[2] || 'build');
process.env.GB_BUILD_DIR = build;
const { launchBrowser, requireBrowser, run, startServer, tempDir, until } = await import('../tests/browser/lib.mjs');

requireBrowser('projector bench');
const work = tempDir('gb-projector-bench-');
const line = (name, v, unit) => console.log(`bench ${name} glassbox=${v.toFixed(unit === 's' ? 2 : 1)} unit=${unit}`);

async function open(db, query = '') {
  const server = await startServer(db);
  const browser = await launchBrowser(path.join(work, `chromium-${path.basename(db)}${query}`), { webgl: true });
  const page = await browser.newPage();
  await page.setViewportSize({ width: 1400, height: 900 });
  await page.goto(new URL(query, server.url).href);
  await until(page, () => window.__glassbox?.ready, null, 30000);
  return { server, browser, page };
}

async function close({ server, browser }) {
  await browser.close();
  await server.stop();
}

// ---- 50,000 points: first paint and a rotated frame -------------------------------------------
const db50k = path.join(work, 'p50k.db');
run(path.join(build, 'tests/write_embedding'), [db50k, '50000', '128', '10'], 300000);
for (const query of ['', '?renderer=webgl']) {
  const s = await open(db50k, query);
  try {
    const t0 = await s.page.evaluate(() => performance.now());
    await s.page.click('a[data-tab="projector"]');
    if (!await until(s.page, () => window.__projector?.projector.stats.firstPaintMs, null, 120000)) throw new Error('never drawn');
    const first = await s.page.evaluate((t) => window.__projector.projector.stats.firstPaintMs - t, t0);
    await until(s.page, () => document.querySelector('.projector-page')?.dataset.projection === 'pca' &&
      !window.__projector.projector.animating, null, 60000);
    const frame = await s.page.evaluate(() => window.__projector.projector.benchRotate(60));
    const renderer = await s.page.$eval('.projector-view', (v) => v.dataset.renderer);
    const suffix = query ? `_${renderer}` : '';   // the page's own choice, then WebGL forced
    if (!query) line('projector_50k_first_paint', first, 'ms');
    line(`projector_50k_rotate_frame${suffix}`, frame, 'ms');
  } finally {
    await close(s);
  }
}

// ---- t-SNE of 5,000 points: seconds to 1,000 iterations, the main thread free -----------------
{
  const db = path.join(work, 't5k.db');
  run(path.join(build, 'tests/write_embedding'), [db, '5000', '128', '10'], 120000);
  const s = await open(db);
  try {
    await s.page.click('a[data-tab="projector"]');
    await until(s.page, () => document.querySelector('.projector-page')?.dataset.projection === 'pca', null, 60000);
    await s.page.evaluate(() => {
      window.__longest = 0;
      new PerformanceObserver((list) => {
        for (const e of list.getEntries()) window.__longest = Math.max(window.__longest, e.duration);
      }).observe({ type: 'longtask', buffered: false });
    });
    await s.page.click('#projector-3d');   // t-SNE in 2D, as usually compared
    await s.page.selectOption('#projector-projection', 'tsne');
    await s.page.fill('#tsne-iterations', '1000');
    await s.page.locator('#tsne-iterations').press('Tab');
    await s.page.click('#projector-run-projection');
    if (!await until(s.page, () => document.querySelector('.projector-page').dataset.running === 'false' &&
      document.querySelector('.projector-page').dataset.iteration === '1000', null, 1200000)) throw new Error('t-SNE never finished');
    const ms = +(await s.page.$eval('.projector-page', (v) => v.dataset.tsneMs));
    const longest = await s.page.evaluate(() => window.__longest);
    line('tsne_5k', ms / 1000, 's');
    line('tsne_5k_longest_task', longest, 'ms');
  } finally {
    await close(s);
  }
}
