// graphs.test.mjs — the Graphs page end to end, driven by the real mouse
// and keyboard, on the stores three examples write: the Fashion-MNIST
// MLP's traced train step (profiled, so compute times are known), the CNN's
// and nan_hunt's traced step, whose numerics alert names a node inside a
// fused op.
//   - the tab opens on the first run that has a graph
//   - the step with its scopes closed (mlp, loss, gradients, Adam); a scope
//     opened by a double-click, one inside it by Enter; an op clicked and
//     its pane filled
//   - the header's figures against the engine's own: the memory plan the
//     example printed from gb_function_graph_stats, and the ops' time per
//     profiled step as the mean per step of the op timings
//   - trace inputs; colour by compute time (and its legend); search
//   - before / after the graph passes, and both side by side with what the
//     passes changed marked, the open scopes kept; the Traces page's link
//   - the CNN's step: no edge label overlaps another label or a box
//   - export as SVG (a standalone file)
//   - from the Numerics page, one click to the alert's node, highlighted
// Screenshots: graphs-*.png.

import fs from 'node:fs';
import path from 'node:path';
import { apiJSON, ARTIFACTS, BUILD, check, finishSuite, launchBrowser, requireBrowser, run, startServer, tabLoaded, tempDir, until, watchedPage } from './lib.mjs';

requireBrowser('webui_graphs_browser');
const work = tempDir('gb-graphs-');
const db = path.join(work, 'graphs.db');
fs.mkdirSync(ARTIFACTS, { recursive: true });
const started = Date.now();
// A run with no graph, named to come first: the tab must not open on it.
run(path.join(BUILD, 'tests/append_scalar'), [db, '0-scalars-only', 'loss', '0', '1.5', '1']);
const mlpOut = run(path.join(BUILD, 'examples/fashion_mnist_mlp'), ['--epochs', '1', '--limit', '3000', '--traced', '--db', db, '--run', 'mlp'], 120000);
run(path.join(BUILD, 'examples/fashion_mnist_cnn'), ['--epochs', '1', '--limit', '600', '--traced', '--db', db, '--run', 'cnn'], 120000);
run(path.join(BUILD, 'examples/nan_hunt'), ['--check-numerics=record', '--traced', '--steps', '80', '--db', db, '--run', 'nan_hunt'], 120000);

const server = await startServer(db);
const browser = await launchBrowser(path.join(work, 'profile'));
const { page, errors } = await watchedPage(browser);

const api = (p, params) => apiJSON(server, p, params);
const shot = (name) => page.screenshot({ path: path.join(ARTIFACTS, `${name}.png`) });
const ready = () => until(page, () => document.querySelector('.graphs-page')?.dataset.state === 'ready', null, 10000);
const expandCount = () => page.evaluate(() => window.__glassbox.graphs.expandMs.length);
// Waits for what act() starts to open or close a scope, and for the page to settle.
async function toggled(act) {
  const n = await expandCount();
  await act();
  await until(page, (k) => window.__glassbox.graphs.expandMs.length > k, n);
  return ready();
}
// A closed scope's box on screen (in the first view, or the one given).
const scopeBox = (p, svg = '#graph-svg') => page.locator(`${svg} .scope.closed[data-path="${p}"] .box:not(.stack)`).boundingBox();
// Opens a scope with a real double-click on its box (away from its "+").
const openScope = (p, svg) => toggled(async () => {
  const b = await scopeBox(p, svg);
  await page.mouse.dblclick(b.x + b.width - 14, b.y + b.height / 2);
});
const closedScopes = () => page.$$eval('#graph-svg .scope.closed', (g) => g.map((x) => x.dataset.path).sort());
const fmtBytes = (b) => {
  if (b < 1024) return `${b} B`;
  const units = ['KiB', 'MiB', 'GiB'];
  let v = b / 1024, u = 0;
  while (v >= 1024 && u < units.length - 1) { v /= 1024; u++; }
  return `${v.toFixed(v < 10 ? 1 : 0)} ${units[u]}`;
};

async function mlp() {
  const list = await api('graphs/list', { run: 'mlp' });
  const concrete = list.functions[0].concretes.at(-1);
  await page.goto(`${server.url}#graphs`);
  check('graphs: page loads', !!await tabLoaded(page, 'graphs', 15000) && !!await ready());
  const firstRun = await page.$eval('#graphs-run', (s) => ({ value: s.value, first: s.options[0].value }));
  check('graphs: the tab opens on the first run with a graph, not the first run', firstRun.first === '0-scalars-only' &&
    firstRun.value === 'cnn', JSON.stringify(firstRun));
  await page.selectOption('#graphs-run', 'mlp');
  await until(page, (v) => document.querySelector('#graphs-pick')?.value === v && !!document.querySelector('#graph-svg .scope.closed[data-path="mlp"]'), `t:${concrete.trace_id}`, 10000);
  await ready();
  check('graphs: the train step with its scopes closed (mlp, loss, gradients, Adam)',
    JSON.stringify(await closedScopes()) === JSON.stringify(['Adam', 'gradients', 'loss', 'mlp']) &&
    await page.$$eval('.scope.open', (g) => g.length) === 0, JSON.stringify(await closedScopes()));
  check('graphs: the newest concrete function is picked', await page.$eval('#graphs-pick', (s) => s.value) === `t:${concrete.trace_id}`);
  check('graphs: edges labelled with shapes', (await page.$$eval('.edge-label:not(.hidden)', (t) => t.map((x) => x.textContent))).includes('?×784'));
  const plus = await page.locator('#graph-svg .scope.closed[data-path="mlp"] .scope-toggle rect').boundingBox();
  check('graphs: the "+" is at least 16 px', plus.width >= 16 && plus.height >= 16, JSON.stringify(plus));
  await headerFigures(concrete);
  await shot('graphs-collapsed');

  await openScope('mlp');
  check('graphs: a double-click with the mouse opens a scope', await page.$$eval('.scope.open[data-path="mlp"]', (g) => g.length) === 1 &&
    (await closedScopes()).includes('mlp/dense'));
  await shot('graphs-dblclick-open');
  // Enter on a focused scope: a click focuses (and selects) it.
  const dense = await scopeBox('mlp/dense');
  await page.mouse.click(dense.x + dense.width - 14, dense.y + dense.height / 2);
  await toggled(() => page.keyboard.press('Enter'));
  check('graphs: Enter on a focused scope opens it; its ops drawn', await page.$$eval('.node[data-name="mlp/dense/MatMul"]', (g) => g.length) === 1);
  await shot('graphs-expanded');

  await page.locator('.node[data-name="mlp/dense/MatMul"]').click();
  const pane = await page.$eval('#graph-pane', (p) => p.textContent);
  check('graphs: a clicked op fills the pane (op, device, output, inputs, compute time and share)',
    ['mlp/dense/MatMul', 'MatMul', 'CPU:0', 'float32[-1,256]', 'per sample', 'images', 'per step', 'share of step'].every((x) => pane.includes(x)), pane.slice(0, 300));
  const attrs = await page.$$eval('#graph-pane table.attrs tr', (r) => r.map((x) => [...x.cells].map((c) => c.textContent).join('=')));
  check('graphs: the pane shows the op\'s attributes by name', JSON.stringify(attrs) === '["transpose_a=false","transpose_b=false"]', JSON.stringify(attrs));
  await shot('graphs-pane-attributes');
  const links = await page.$$eval('#graph-pane .pane-link', (a) => a.map((x) => x.dataset.name));
  check('graphs: inputs and consumers are links', links.includes('images') && links.includes('mlp/dense/ReadVariableOp') && links.includes('mlp/dense/Add'), links.join(','));

  await page.check('#graphs-trace-inputs');
  const traced = await page.$$eval('.node.traced', (n) => n.map((x) => x.dataset.name).sort());
  check('graphs: trace inputs highlights what feeds the op, and only that',
    JSON.stringify(traced) === JSON.stringify(['images', 'mlp/dense/MatMul', 'mlp/dense/ReadVariableOp']) &&
    await page.$$eval('.node.dim[data-name="labels"]', (n) => n.length) === 1, traced.join(','));
  await shot('graphs-trace-inputs');
  await page.uncheck('#graphs-trace-inputs');

  await page.selectOption('#graphs-colour', 'time');
  const fills = await page.$$eval('.node .box', (b) => Object.fromEntries(b.map((x) => [x.closest('.node').dataset.name, x.getAttribute('fill')])));
  check('graphs: colour by compute time (the first MatMul darker than a read)', fills['mlp/dense/MatMul'] !== fills['mlp/dense/ReadVariableOp'] &&
    (await page.$eval('.graph-legend-title', (t) => t.textContent)).startsWith('Compute time'), JSON.stringify(fills).slice(0, 200));
  await shot('graphs-compute-time');
  await page.selectOption('#graphs-colour', 'op');

  await page.fill('#graphs-search', 'ResourceApplyAdam');
  const hits = await page.$$eval('.search-hit', (a) => a.map((x) => x.dataset.name));
  check('graphs: search by op type', hits.length === 6 && hits.every((n) => n.startsWith('Adam/')), hits.join(','));
  await page.click('.search-hit');
  check('graphs: a search hit opens its scope and selects it',
    !!await until(page, (n) => document.querySelector('.graphs-page').dataset.selected === n, hits[0]) &&
    await page.$$eval(`.node.selected[data-name="${hits[0]}"]`, (n) => n.length) === 1);

  const download = page.waitForEvent('download');
  await page.click('#graphs-export');
  const file = await (await download).path();
  const svg = fs.readFileSync(file, 'utf8');
  check('graphs: export SVG writes a standalone file of the view', svg.startsWith('<?xml') && svg.includes('<svg') &&
    svg.includes('xmlns="http://www.w3.org/2000/svg"') && svg.includes('mlp/dense/MatMul') && svg.includes('stroke-width="'), `${svg.length} bytes`);
  fs.copyFileSync(file, path.join(ARTIFACTS, 'graphs-export.svg'));

  const colours = async () => page.$$eval('#graph-svg .node', (ns) => Object.fromEntries(ns.map((n) => [n.dataset.op, n.querySelector('.box').getAttribute('fill')])));
  const after = await colours();
  await page.selectOption('#graphs-stage', 'traced');
  check('graphs: before the passes: the graph as traced', !!await until(page, (n) => document.querySelector('.graph-info')?.textContent.includes(`${n} nodes`), concrete.nodes_before) &&
    !!await ready());
  check('graphs: the scopes open stay open in the other stage', await page.$$eval('.scope.open[data-path="mlp/dense"]', (g) => g.length) === 1);
  const before = await colours();
  const shared = Object.keys(after).filter((op) => op in before);
  check('graphs: an op type has the same colour in both stages', shared.length >= 4 && shared.every((op) => before[op] === after[op]), JSON.stringify({ before, after }));
  await compareStages(concrete);
  await page.selectOption('#graphs-stage', 'optimized');
  await ready();

  // The Traces page links each trace to its graph.
  await page.goto(`${server.url}#traces`);
  await tabLoaded(page, 'traces', 10000);
  await page.selectOption('#traces-run', 'mlp');
  const first = list.functions[0].concretes[0];
  await page.click(`.trace-row[data-id="${first.trace_id}"] a.graph-link`);
  check('graphs: the Traces page\'s graph link opens that trace', !!await tabLoaded(page, 'graphs', 10000) && !!await ready() &&
    await page.$eval('#graphs-pick', (s) => s.value) === `t:${first.trace_id}`);
}

// The header against the engine: the memory plan the example printed from
// gb_function_graph_stats for its newest trace (the one shown), and the
// profiled step as the mean per step of the op timings of this graph's
// nodes — not their sum over the steps timed.
async function headerFigures(concrete) {
  const g = await api('graphs/graph', { run: 'mlp', trace: concrete.trace_id });
  const plan = /memory plan: arena (\d+) bytes \(naive (\d+)\) for (.*)/.exec(mlpOut);
  const header = await page.$eval('.graph-info', (e) => e.textContent);
  const arena = await page.$eval('.graph-arena', (e) => ({ arena: Number(e.dataset.arena), naive: Number(e.dataset.naive) }));
  check('graphs: the header\'s arena is the engine\'s plan for the shapes the step ran with',
    !!plan && arena.arena === Number(plan[1]) && arena.naive === Number(plan[2]) && arena.arena > g.arena_bytes &&
    header.includes(`arena ${fmtBytes(Number(plan[1]))} (naive ${fmtBytes(Number(plan[2]))}) for ${plan[3]}`),
    `${header} | printed ${plan?.[0]} | stored ${g.arena_bytes}`);
  const names = new Set(g.graph.nodes.map((n) => n.name));
  const timed = Object.entries(g.profile).filter(([k]) => names.has(k)).map(([, p]) => p);
  const steps = Math.max(...timed.map((p) => p.calls));
  const stepUs = timed.reduce((sum, p) => sum + p.total_us / p.calls, 0);
  const summed = timed.reduce((sum, p) => sum + p.total_us, 0);
  const shown = await page.$eval('.graph-step', (e) => ({ us: Number(e.dataset.stepUs), steps: Number(e.dataset.steps), text: e.textContent }));
  check('graphs: the header\'s ops time per profiled step is the mean per step of the op timings, over how many steps',
    steps >= 2 && Math.abs(shown.us - stepUs) < 1e-3 && shown.steps === steps &&
    shown.text.includes(`ops ${(stepUs / 1000).toFixed(2)} ms per profiled step (mean of ${steps} steps)`) &&
    !header.includes(`${(summed / 1000).toFixed(2)} ms`), `${shown.text} | mean ${stepUs} µs over ${steps}, sum ${summed} µs`);
}

// Both stages side by side: what the passes changed, marked in each; the
// scopes open before stay open in both.
async function compareStages(concrete) {
  await page.selectOption('#graphs-stage', 'compare');
  await ready();
  const views = await page.$$eval('.graph-canvases .graph-svg', (s) => s.length);
  check('graphs: compare shows both stages side by side', views === 2 &&
    await page.$$eval('.scope.open[data-path="mlp/dense"]', (g) => g.length) === 2, `${views} views`);
  const legend = await page.$$eval('#graphs-diff [data-change]', (r) => Object.fromEntries(r.map((x) => [x.dataset.change, Number(x.textContent.replace(/\D/g, ''))])));
  // Every traced op the optimized graph lacks was removed, merged or fused
  // away (a fused chain keeps its root's name): the counts add up.
  const optimized = await api('graphs/graph', { run: 'mlp', trace: concrete.trace_id });
  const roots = optimized.graph.nodes.filter((n) => n.fused?.length).length;
  check('graphs: the changes counted: removed + merged + fused away = the ops the passes took out',
    legend.removed + legend.merged + legend.fused - roots === concrete.nodes_before - concrete.nodes_after && legend.fused > 0,
    JSON.stringify({ legend, roots, before: concrete.nodes_before, after: concrete.nodes_after }));
  // A closed scope says how many ops in it changed: open those until ops show.
  const marked = () => page.$$eval('#graph-svg .node[class*="diff-"]', (n) => n.map((x) => x.getAttribute('class')));
  const badged = [];
  await page.getByRole('button', { name: 'Fit' }).click();
  for (let i = 0; i < 4 && !(await marked()).length; i++) {
    const next = await page.$$eval('#graph-svg .scope.closed', (g) => g.find((x) => x.querySelector('.diff-badge'))?.dataset.path ?? null);
    if (!next) break;
    badged.push(next);
    await openScope(next);
  }
  const classes = await marked();
  check('graphs: ops the passes changed are marked in the traced graph, found through the scopes\' badges', classes.length > 0 && badged.length > 0,
    `${badged.join(' → ')}: ${classes.join(' | ')}`);
  await shot('graphs-compare');
}

// The CNN's train step, its scopes open: no edge label overlaps another or
// a box (each is where there was room, or hidden until hovered).
async function cnnLabels() {
  await page.goto(`${server.url}#graphs?run=cnn`);
  await tabLoaded(page, 'graphs', 15000);
  await ready();
  for (const p of ['cnn', 'loss']) await openScope(p);
  const overlaps = await page.evaluate(() => {
    const svg = document.querySelector('#graph-svg');
    const rect = (el) => { const r = el.getBoundingClientRect(); return { x: r.left, y: r.top, w: r.width, h: r.height, t: el.textContent }; };
    const labels = [...svg.querySelectorAll('.edge-label:not(.hidden)')].map(rect);
    const boxes = [...svg.querySelectorAll('.node .box, .scope.closed .box:not(.stack), .scope.open .scope-bar')].map(rect);
    const hit = (a, b) => a.x < b.x + b.w - 0.5 && b.x < a.x + a.w - 0.5 && a.y < b.y + b.h - 0.5 && b.y < a.y + a.h - 0.5;
    const out = [];
    labels.forEach((a, i) => {
      labels.slice(i + 1).forEach((b) => { if (hit(a, b)) out.push(`${a.t} / ${b.t}`); });
      boxes.forEach((b) => { if (hit(a, b)) out.push(`${a.t} on a box`); });
    });
    return { out, labels: labels.length };
  });
  check('graphs: the CNN step\'s edge labels never overlap a label or a box', overlaps.labels > 5 && overlaps.out.length === 0,
    `${overlaps.labels} labels; ${overlaps.out.slice(0, 5).join(' | ')}`);
  const hidden = await page.$$eval('#graph-svg .edge-label.hidden', (t) => t.length);
  if (hidden) {
    const edge = page.locator('#graph-svg .edge:has(.edge-label.hidden) .edge-hit').first();
    await edge.hover({ force: true });
    check('graphs: a label with no room shows on hover', await page.$eval('#graph-svg .edge:hover .edge-label.hidden', (t) => getComputedStyle(t).visibility).catch(() => 'none') === 'visible');
  }
  await page.mouse.move(5, 5);
  await shot('graphs-cnn-labels');
}

async function numerics() {
  await page.goto(`${server.url}?run=nan_hunt#numerics`);
  check('numerics: page loads', !!await tabLoaded(page, 'numerics', 10000));
  const link = await until(page, () => document.querySelector('.numerics-first a.graph-link')?.dataset.node);
  check('numerics: the first alert links to its node in the graph', link === 'naive_cross_entropy/Log', String(link));
  await page.click('.numerics-first a.graph-link');
  check('graphs: opened from the alert', !!await tabLoaded(page, 'graphs', 10000) && !!await ready());
  const alert = await until(page, () => {
    const n = document.querySelector('.node.alert');
    return n && { name: n.dataset.name, selected: n.classList.contains('selected'), fused: n.dataset.op };
  });
  check('graphs: the alert\'s node highlighted and selected (the fused op that holds naive_cross_entropy/Log)',
    alert && alert.selected && alert.name.startsWith('naive_cross_entropy/') && alert.fused === 'FusedElementwise', JSON.stringify(alert));
  const pane = await page.$eval('#graph-pane', (p) => p.textContent);
  check('graphs: its pane lists the fused ops, Log among them', pane.includes('Fused ops') && pane.includes('naive_cross_entropy/Log'));
  await shot('graphs-numerics-alert');
}

async function main() {
  await mlp();
  await cnnLabels();
  await numerics();
  check('no console errors or failed requests', errors.length === 0, `${errors.length}: ${errors.slice(0, 3).join(' | ')}`);
}

await finishSuite('graphs suite', main, { browser, server, work, started });
