// graphs_scale.test.mjs — the Graphs page draws graphs the size of real
// models (tests/graph_shapes.c, via webui_fixtures graph), opened with
// the real mouse and keyboard:
//   10k100    10,000 ops in 100 scopes of the same structure: one series
//             group marked ×100 that opens onto its scopes
//   scope5k   one scope of 5,000 ops (dagre overflowed its stack at 2,000):
//             it opens onto parts of at most 100, one opened in turn
//   flat5k    5,000 ops and no scope: drawn as parts
//   repeat12  a transformer layer 12 times: one group marked ×12
// No layout is handed more than 200 boxes; the "+" is at least 16 px when
// the graph first appears. How fast is not asserted here (make test runs
// on loaded machines): bench/graphs_page.bench.mjs measures it.
// Screenshots: graphs-scale-*.png.

import fs from 'node:fs';
import path from 'node:path';
import { ARTIFACTS, BUILD, check, finishSuite, launchBrowser, requireBrowser, run, startServer, tempDir, until, watchedPage } from './lib.mjs';

requireBrowser('webui_graphs_scale');
const work = tempDir('gb-graphs-scale-');
fs.mkdirSync(ARTIFACTS, { recursive: true });
const started = Date.now();
const SHAPES = ['10k100', 'scope5k', 'flat5k', 'repeat12'];
const dbs = Object.fromEntries(SHAPES.map((s) => [s, path.join(work, `${s}.db`)]));
for (const s of SHAPES) run(path.join(BUILD, 'tests/webui_fixtures'), ['graph', dbs[s], s], 60000);

const browser = await launchBrowser(path.join(work, 'profile'));
const { page, errors } = await watchedPage(browser);
let server = null;

const ready = () => until(page, () => document.querySelector('.graphs-page')?.dataset.state === 'ready', null, 30000);
const info = () => page.$eval('.graph-info', (e) => e.textContent);
const closed = () => page.$$eval('.scope.closed', (g) => g.map((x) => ({ path: x.dataset.path, label: x.querySelector('.scope-label').textContent, sub: x.querySelector('.scope-sub').textContent })));
const nodes = () => page.$$eval('.node', (n) => n.length);
const count = (sub) => Number(sub.replace(/^.*· /, '').replace(/[^\d]/g, ''));
const MAX_BOXES = 200;   // hierarchy.js MAX_CHILDREN

async function show(shape) {
  // Leave the page first, as a person closes the tab: a page still open on
  // a server that stops would rightly report its lost event stream.
  if (server) {
    await page.goto('about:blank');
    await server.stop();
  }
  server = await startServer(dbs[shape]);
  await page.goto(`${server.url}#graphs?run=big&tag=generated&step=0`);
  return until(page, () => document.querySelector('.graphs-page')?.dataset.state === 'ready' &&
    document.querySelectorAll('.scope.closed').length > 0, null, 30000);
}

// Opens a closed scope by a real double-click on its box; false if it did not open.
async function dblclickOpen(p) {
  const el = page.locator(`.scope.closed[data-path="${p}"]`);
  const box = await el.locator('.box:not(.stack)').boundingBox();
  if (!box) return false;
  const n = await page.evaluate(() => window.__glassbox.graphs.expandMs.length);
  await page.mouse.dblclick(box.x + box.width - 12, box.y + box.height / 2);
  await until(page, (k) => window.__glassbox.graphs.expandMs.length > k, n, 30000);
  await ready();
  return page.$$eval(`.scope.open[data-path="${p}"]`, (g) => g.length === 1);
}

async function tenThousand() {
  check('10k100: drawn', !!await show('10k100') && (await info()).includes('10,001 nodes in 100 scopes'), await info());
  const groups = await closed();
  const series = groups.find((g) => g.path === 'block_[0-99]');
  check('10k100: the 100 scopes of one structure collapse into one group marked ×100', groups.length === 1 && !!series &&
    series.sub.startsWith('×100 · 10,000 nodes'), JSON.stringify(groups));
  const plus = await page.locator('.scope.closed .scope-toggle rect').first().boundingBox();
  check('10k100: the "+" is at least 16 px when the graph first appears', plus.width >= 16 && plus.height >= 16, JSON.stringify(plus));
  check('10k100: a real double-click opens the series onto its 100 scopes', await dblclickOpen('block_[0-99]') &&
    (await closed()).filter((g) => /^block_\d\d$/.test(g.path)).length === 100);
  await page.screenshot({ path: path.join(ARTIFACTS, 'graphs-scale-10k100.png') });
  // Enter on a focused scope: a click focuses it, Enter opens it.
  const target = await page.$$eval('.scope.closed', (gs) => {
    const c = document.querySelector('.graph-canvas').getBoundingClientRect();
    const inView = gs.filter((g) => { const r = g.getBoundingClientRect(); return r.left > c.left && r.right < c.right && r.top > c.top && r.bottom < c.bottom; });
    return inView.at(-1)?.dataset.path;
  });
  const box = await page.locator(`.scope.closed[data-path="${target}"] .box:not(.stack)`).boundingBox();
  await page.mouse.click(box.x + box.width - 12, box.y + box.height / 2);
  const n = await page.evaluate(() => window.__glassbox.graphs.expandMs.length);
  await page.keyboard.press('Enter');
  await until(page, (k) => window.__glassbox.graphs.expandMs.length > k, n, 30000);
  await ready();
  // 100 ops, 10 of them constants drawn beside their consumers.
  const drawn = await page.$$eval('.node', (x, t) => x.filter((n) => n.dataset.name.startsWith(`${t}/`)).length, target);
  const focused = await page.evaluate(() => document.activeElement?.dataset?.path);
  check('10k100: Enter opens the focused scope, which keeps the focus; its ops drawn', /^block_\d\d$/.test(target) && drawn === 90 && focused === target,
    `${target}: ${drawn} ops, focus on ${focused}`);
  await page.screenshot({ path: path.join(ARTIFACTS, 'graphs-scale.png') });
}

// A scope of n ops, cut into parts: how many, and what each holds.
async function checkParts(label, parts, total) {
  const sum = parts.reduce((a, g) => a + count(g.sub), 0);
  check(`${label}: cut into parts that hold every op, ${MAX_BOXES} boxes at most per layout`,
    parts.length >= 40 && parts.length <= MAX_BOXES && sum === total && parts.every((g) => /part \d+ of/.test(g.label)),
    `${parts.length} parts holding ${sum}`);
}

async function bigScope() {
  check('scope5k: drawn (one scope of 5,000 ops)', !!await show('scope5k') && /5,001 nodes in 1 scope($| ·)/.test(await info()), await info());
  check('scope5k: the scope opens', await dblclickOpen('gradients'));
  await checkParts('scope5k', await closed(), 4500);   // and 500 constants drawn beside their consumers
  const first = (await closed())[0].path;
  check('scope5k: a part opens onto its ops', await dblclickOpen(first) && await nodes() > 50 && await nodes() <= 101, `${first}: ${await nodes()} nodes`);
  await page.screenshot({ path: path.join(ARTIFACTS, 'graphs-scale-scope5k.png') });
}

async function flat() {
  check('flat5k: drawn', !!await show('flat5k'));
  await checkParts('flat5k', await closed(), 4501);
  const second = (await closed())[1].path;
  check('flat5k: a part opens onto its ops', await dblclickOpen(second) && await nodes() > 50 && await nodes() <= 100, `${second}: ${await nodes()} nodes`);
}

async function repeated() {
  check('repeat12: drawn', !!await show('repeat12'));
  check('repeat12: the encoder opens onto one group of its 12 layers, marked ×12', await dblclickOpen('encoder') &&
    (await closed()).some((g) => g.path === 'encoder/layer_[0-11]' && g.sub.startsWith('×12 · ')), JSON.stringify(await closed()));
  check('repeat12: the group opens onto layer_0 … layer_11', await dblclickOpen('encoder/layer_[0-11]') &&
    (await closed()).filter((g) => /^encoder\/layer_\d+$/.test(g.path)).length === 12);
  check('repeat12: a layer opens', await dblclickOpen('encoder/layer_3'));
  const inside = (await closed()).map((g) => g.path).filter((x) => x.startsWith('encoder/layer_3/')).sort();
  check('repeat12: layer_3 holds attention, layer_norm, layer_norm_1, mlp, residual, residual_1',
    JSON.stringify(inside) === JSON.stringify(['attention', 'layer_norm', 'layer_norm_1', 'mlp', 'residual', 'residual_1'].map((x) => `encoder/layer_3/${x}`)), inside.join(','));
  await page.screenshot({ path: path.join(ARTIFACTS, 'graphs-scale-repeat12.png') });
}

async function main() {
  await tenThousand();
  await bigScope();
  await flat();
  await repeated();
  check('no console errors or failed requests', errors.length === 0, errors.slice(0, 3).join(' | '));
}

await finishSuite('graphs scale suite', main, { browser, server: { stop: () => (server ? server.stop() : { code: 0 }) }, work, started });
