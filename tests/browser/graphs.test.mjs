// graphs.test.mjs — the Graphs page end to end, on the stores two examples
// write: the Fashion-MNIST MLP's traced train step (profiled, so compute
// times are known) and nan_hunt's traced step, whose numerics alert names
// a node inside a fused op.
//   - the step with its scopes closed (mlp, loss, gradients, Adam); a scope
//     opened, and one inside it; an op clicked and its pane filled
//   - trace inputs; colour by compute time (and its legend); search
//   - before / after the graph passes; the Traces page's graph link
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
run(path.join(BUILD, 'examples/fashion_mnist_mlp'), ['--epochs', '1', '--limit', '3000', '--traced', '--db', db, '--run', 'mlp'], 120000);
run(path.join(BUILD, 'examples/nan_hunt'), ['--check-numerics=record', '--traced', '--steps', '80', '--db', db, '--run', 'nan_hunt'], 120000);

const server = await startServer(db);
const browser = await launchBrowser(path.join(work, 'profile'));
const { page, errors } = await watchedPage(browser);

const api = (p, params) => apiJSON(server, p, params);
const shot = (name) => page.screenshot({ path: path.join(ARTIFACTS, `${name}.png`) });
const ready = () => until(page, () => document.querySelector('.graphs-page')?.dataset.state === 'ready', null, 10000);
// Clicks an SVG element by selector (it may lie outside the visible part of the canvas).
const click = (sel) => page.$eval(sel, (el) => el.dispatchEvent(new MouseEvent('click', { bubbles: true })));
const openScope = async (p) => {
  const n = await page.evaluate(() => window.__glassbox.graphs.expandMs.length);
  await click(`.scope[data-path="${p}"] [data-toggle]`);
  await until(page, (k) => window.__glassbox.graphs.expandMs.length > k, n);
  return ready();
};
const closedScopes = () => page.$$eval('.scope.closed', (g) => g.map((x) => x.dataset.path).sort());

async function mlp() {
  const list = await api('graphs/list', { run: 'mlp' });
  const concrete = list.functions[0].concretes.at(-1);
  await page.goto(`${server.url}#graphs?run=mlp`);
  check('graphs: page loads', !!await tabLoaded(page, 'graphs', 15000) && !!await ready());
  check('graphs: the train step with its scopes closed (mlp, loss, gradients, Adam)',
    JSON.stringify(await closedScopes()) === JSON.stringify(['Adam', 'gradients', 'loss', 'mlp']) &&
    await page.$$eval('.scope.open', (g) => g.length) === 0, JSON.stringify(await closedScopes()));
  check('graphs: the newest concrete function is picked', await page.$eval('#graphs-pick', (s) => s.value) === `t:${concrete.trace_id}`);
  check('graphs: edges labelled with shapes', (await page.$$eval('.edge-label', (t) => t.map((x) => x.textContent))).includes('?×784'));
  await shot('graphs-collapsed');

  await openScope('mlp');
  check('graphs: a scope opens', await page.$$eval('.scope.open[data-path="mlp"]', (g) => g.length) === 1 &&
    (await closedScopes()).includes('mlp/dense'));
  await openScope('mlp/dense');
  check('graphs: a scope inside it opens; its ops drawn', await page.$$eval('.node[data-name="mlp/dense/MatMul"]', (g) => g.length) === 1);
  await shot('graphs-expanded');

  await click('.node[data-name="mlp/dense/MatMul"]');
  const pane = await page.$eval('#graph-pane', (p) => p.textContent);
  check('graphs: a clicked op fills the pane (op, device, output, inputs, compute time and share)',
    ['mlp/dense/MatMul', 'MatMul', 'CPU:0', 'float32[-1,256]', 'images', 'share of step'].every((s) => pane.includes(s)), pane.slice(0, 300));
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

  await page.selectOption('#graphs-stage', 'traced');
  check('graphs: before the passes: the graph as traced', !!await until(page, (n) => document.querySelector('.graph-info')?.textContent.includes(`${n} nodes`), concrete.nodes_before) &&
    !!await ready());
  await page.selectOption('#graphs-stage', 'optimized');
  await ready();

  // The Traces page links each trace to its graph.
  await page.goto(`${server.url}#traces`);
  await tabLoaded(page, 'traces', 10000);
  const first = list.functions[0].concretes[0];
  await page.click(`.trace-row[data-id="${first.trace_id}"] a.graph-link`);
  check('graphs: the Traces page\'s graph link opens that trace', !!await tabLoaded(page, 'graphs', 10000) && !!await ready() &&
    await page.$eval('#graphs-pick', (s) => s.value) === `t:${first.trace_id}`);
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
  await numerics();
  check('no console errors or failed requests', errors.length === 0, `${errors.length}: ${errors.slice(0, 3).join(' | ')}`);
}

await finishSuite('graphs suite', main, { browser, server, work, started });
