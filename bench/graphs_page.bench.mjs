// graphs_page.bench.mjs — the Graphs page and its list routes at the size
// of real models, measured in Debian's chromium (playwright-core), on the
// generated graphs of tests/graph_shapes.c. For each shape:
//   bench graphs_<shape>_first_paint   navigation to the graph drawn (ms)
//   bench graphs_<shape>_open_scope    the first open of its biggest closed
//                                      scope, cold: before any background
//                                      layout, from the double-click to it
//                                      painted open (ms)
//   bench graphs_<shape>_longest_task  the longest main-thread task over
//                                      both (ms; PerformanceObserver)
// with shapes 10k100, 10x1000, flat5k, scope5k, repeat12 (goals: first
// paint <= 1500, open <= 300, no task over 200); and over 1,000 traces of
// a 2,000-op graph each, the median of 15 requests:
//   bench graphs_list_1000 / traces_list_1000   (ms)
// Each page figure is the median of 3 fresh page loads. There is no peer
// in the same run (TensorBoard is not installed), so no ratio.
//
//   node bench/graphs_page.bench.mjs [build]

import fs from 'node:fs';
import path from 'node:path';

const build = path.resolve(process.argv[2] || 'build');
process.env.GB_BUILD_DIR = build;
const { BUILD, launchBrowser, requireBrowser, run, startServer, tempDir, until } = await import('../tests/browser/lib.mjs');

requireBrowser('graphs_page bench');
const SHAPES = ['10k100', '10x1000', 'flat5k', 'scope5k', 'repeat12'];
const ROUNDS = 3;
const work = tempDir('gb-graphs-bench-');
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const line = (name, ms) => console.log(`bench ${name} glassbox=${ms.toFixed(1)} unit=ms`);

async function measurePage(browser, url) {
  const page = await browser.newPage();
  await page.setViewportSize({ width: 1400, height: 900 });
  await page.addInitScript(() => {
    window.__longTasks = [];
    new PerformanceObserver((l) => { for (const e of l.getEntries()) window.__longTasks.push(e.duration); })
      .observe({ type: 'longtask', buffered: true });
  });
  const t0 = Date.now();
  await page.goto(url);
  const ready = await until(page, () => document.querySelector('.graphs-page')?.dataset.state === 'ready' &&
    document.querySelectorAll('.graphs-page .scope.closed').length > 0, null, 60000);
  const firstPaint = Date.now() - t0;
  if (!ready) throw new Error(`${url}: never drawn`);
  // The biggest closed scope on screen, opened by a real double-click at
  // once; when it is a group of scopes (a series, the parts of a big
  // scope), then the biggest scope inside, until ops show: the figure is
  // the slowest of these opens.
  const opened = [];
  for (let k = 0; k < 4; k++) {
    // Inside the scope just opened when it has closed scopes of its own
    // path (parts); else anywhere (a series' members keep their paths).
    const target = await page.$$eval('.scope.closed', (gs, last) => {
      const sub = (g) => Number(g.querySelector('.scope-sub').textContent.replace(/^.*·/, '').replace(/[^\d]/g, ''));
      const inside = gs.filter((g) => last && g.dataset.path.startsWith(`${last}/`));
      return (inside.length ? inside : gs).reduce((a, g) => (!a || sub(g) > sub(a) ? g : a), null)?.dataset.path ?? null;
    }, opened.at(-1)?.target ?? null);
    if (!target) break;
    const el = page.locator(`.scope.closed[data-path="${target}"]`);
    await el.scrollIntoViewIfNeeded();
    const box = await el.locator('.box:not(.stack)').boundingBox();
    const n = await page.evaluate(() => window.__glassbox.graphs.expandMs.length);
    const ops = await page.$$eval('.node', (x) => x.length);
    await page.mouse.dblclick(box.x + box.width - 12, box.y + box.height / 2);
    await until(page, (k) => window.__glassbox.graphs.expandMs.length > k, n, 60000);
    opened.push({ target, ms: await page.evaluate(() => window.__glassbox.graphs.expandMs.at(-1)) });
    if (await page.$$eval('.node', (x) => x.length) > ops) break;   // it held ops
  }
  const longest = Math.max(0, ...await page.evaluate(() => window.__longTasks));
  await page.close();
  return { firstPaint, open: Math.max(...opened.map((o) => o.ms)), longest, target: opened.map((o) => o.target).join(' then ') };
}

async function pageFigures() {
  const browser = await launchBrowser(path.join(work, 'profile'));
  try {
    for (const shape of SHAPES) {
      const db = path.join(work, `${shape}.db`);
      run(path.join(BUILD, 'tests/webui_fixtures'), ['graph', db, shape], 120000);
      const server = await startServer(db);
      try {
        const got = [];
        for (let i = 0; i < ROUNDS; i++) got.push(await measurePage(browser, `${server.url}#graphs?run=big&tag=generated&step=0`));
        console.error(`${shape}: opened ${got[0].target}`);
        line(`graphs_${shape}_first_paint`, median(got.map((g) => g.firstPaint)));
        line(`graphs_${shape}_open_scope`, median(got.map((g) => g.open)));
        line(`graphs_${shape}_longest_task`, median(got.map((g) => g.longest)));
      } finally {
        await server.stop();
      }
    }
  } finally {
    await browser.close();
  }
}

async function listFigures() {
  const db = path.join(work, 'many.db');
  run(path.join(BUILD, 'tests/webui_fixtures'), ['many_traces', db, '1000', '2000'], 600000);
  const server = await startServer(db);
  try {
    for (const [name, route] of [['graphs_list_1000', 'graphs/list'], ['traces_list_1000', 'traces/list']]) {
      const url = new URL(`api/${route}?run=many`, server.url);
      const times = [];
      for (let i = 0; i < 16; i++) {
        const t0 = performance.now();
        const r = await fetch(url);
        const body = await r.json();
        if (!r.ok || (body.traces ?? body.functions[0].concretes).length !== 1000) throw new Error(`${route}: ${r.status}`);
        if (i) times.push(performance.now() - t0);   // the first warms the reader
      }
      line(name, median(times));
    }
  } finally {
    await server.stop();
  }
}

try {
  await listFigures();
  await pageFigures();
} finally {
  fs.rmSync(work, { recursive: true, force: true });
}
