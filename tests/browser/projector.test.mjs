// projector.test.mjs — the Projector page end to end, as a person uses it:
// fashion_mnist_fit trains the CNN for two epochs and records the
// penultimate layer's activations of 5,000 test images each epoch, with
// their class names and sprites (--projector 5000); `glassbox serve`
// serves the store and Debian's chromium (WebGL from SwiftShader) opens
// the Projector with the real mouse and keyboard. Checks: PCA's shares of
// variance are NumPy's (python3-numpy) for the same vectors, the classes
// form clusters, the legend counts each class as the metadata does, a
// hovered point is labelled, a clicked point lists its 10 nearest
// neighbours in the original space (cosine, then euclidean) as computed
// here from the API's vectors, a regex search selects and isolates a
// class and PCA re-projects it alone (NumPy's shares of those rows), a
// drag rotates the 3D view, the step slider moves the points, t-SNE runs
// to its last iteration in a worker (2D, then 3D) and separates the
// classes better than PCA, isolating two classes runs it again on them
// alone, and UMAP stops when asked. Screenshots:
// <build>/tests/artifacts/projector_*.png.

import path from 'node:path';
import fs from 'node:fs';
import { execFileSync } from 'node:child_process';
import { ARTIFACTS, BUILD, check, finishSuite, launchBrowser, requireBrowser, run, startServer, tabLoaded, tempDir, until, watchedPage } from './lib.mjs';
import { nearest, parseMetadata } from '../../static/projector/model.js';

requireBrowser('projector_browser');
const work = tempDir('gb-projector-');
const db = path.join(work, 'fmnist.db');
fs.mkdirSync(ARTIFACTS, { recursive: true });
const started = Date.now();
run(path.join(BUILD, 'examples/fashion_mnist_fit'), ['--model', 'cnn', '--epochs', '2', '--limit', '6000',
  '--projector', '5000', '--db', db, '--verbose', '0'], 600000);

const server = await startServer(db);
const browser = await launchBrowser(path.join(work, 'profile'), { webgl: true });
const { page, errors } = await watchedPage(browser);
const shot = (name, el) => (el ?? page).screenshot({ path: path.join(ARTIFACTS, `projector_${name}.png`) });
const dataset = () => page.$eval('.projector-page', (v) => ({ ...v.dataset }));

async function bytes(route, params) {
  const res = await fetch(new URL(`api/projector/${route}?${new URLSearchParams(params)}`, server.url));
  return Buffer.from(await res.arrayBuffer());
}

// Mean distance to the 10 nearest points of the same class minus of any
// other, over a sample: how well positions (n*3) separate the classes.
function purity(pos, labels, n) {
  let same = 0, total = 0;
  for (let i = 0; i < n; i += 25) {
    for (const r of nearest(pos, n, 3, i, 10, 'euclidean')) {
      same += labels[r.index] === labels[i];
      total++;
    }
  }
  return same / total;
}

async function main() {
  const run = 'cnn', tag = 'embeddings/dense';
  const list = await (await fetch(new URL(`api/projector/list?run=${run}&tag=${encodeURIComponent(tag)}`, server.url))).json();
  check('api: two steps (epochs 0 and 1 of the fit) of 5000 x 128 with 28x28 sprites',
    list.steps.length === 2 && list.steps.every((s) => s.n === 5000 && s.dim === 128 && s.sprite?.width === 28), JSON.stringify(list.steps));
  const last = list.steps.at(-1).step;
  const vecBuf = await bytes('vectors', { run, tag, step: last });
  const vectors = new Float32Array(vecBuf.buffer, vecBuf.byteOffset, vecBuf.length / 4);
  const meta = parseMetadata((await bytes('metadata', { run, tag, step: last })).toString(), 5000);
  const labels = meta.rows.map((r) => r[0]);

  // NumPy's explained variance of the same vectors (of the rows listed, or all).
  const f32 = path.join(work, 'vectors.f32');
  fs.writeFileSync(f32, vecBuf);
  const numpyRatios = (rows = []) => execFileSync('/usr/bin/python3', ['-c',
    'import numpy as np,sys; x=np.fromfile(sys.argv[1],"<f4").reshape(5000,128).astype(np.float64);'
    + ' r=[int(v) for v in sys.argv[2:]]; x=x[r] if r else x; x-=x.mean(0);'
    + ' s=np.linalg.svd(x,compute_uv=False); r=s**2/np.sum(s**2); print(",".join("%.6f"%v for v in r[:3]))',
  f32, ...rows.map(String)]).toString().trim();
  const numpy = numpyRatios();

  await page.goto(server.url);
  check('shell: ready', await until(page, () => window.__glassbox?.ready, null, 10000));
  await page.click('a[data-tab="projector"]');
  check('projector: page loads with PCA', await tabLoaded(page, 'projector', 60000) &&
    await until(page, () => document.querySelector('.projector-page')?.dataset.projection === 'pca', null, 60000));
  let d = await dataset();
  check('projector: the last step of the CNN\'s penultimate layer, 5000 points', d.run === run && d.tag === tag &&
    d.step === String(last) && d.points === '5000', JSON.stringify(d));
  const variance = await page.$eval('#projector-info', (el) => el.dataset.variance);
  check('PCA: the shares of variance are NumPy\'s for the same vectors', variance === numpy, `${variance} vs ${numpy}`);
  const shown = await page.$eval('#projector-variance', (el) => el.textContent);
  const pct = numpy.split(',').map((v) => `${(100 * v).toFixed(1)} %`);
  check('PCA: the page says each component\'s share', pct.every((p) => shown.includes(p)), shown);

  // ---- the legend: a colour per class, counted as the metadata says ----------------------------
  const legend = await page.$$eval('.projector-legend-row', (rows) => rows.map((r) => r.textContent));
  const counts = {};
  for (const l of labels) counts[l] = (counts[l] || 0) + 1;
  check('legend: ten classes with their counts', legend.length === 10 &&
    Object.entries(counts).every(([k, v]) => legend.includes(`${k} ${v}`)), JSON.stringify(legend));

  // ---- clusters: switch sprites off, 2D, screenshot; classes apart ------------------------------
  await page.click('#projector-sprites');
  await page.click('#projector-3d');
  await until(page, () => !window.__projector.projector.animating, null, 5000);
  const pcaPos = await page.evaluate(() => Array.from(window.__projector.shown));
  const pcaPurity = purity(Float32Array.from(pcaPos), labels, 5000);
  // by chance about 0.1 of a point's neighbours share its class (ten classes of ~500)
  check('PCA: the classes form clusters (over 4x chance of the 10 nearest on screen share the class)', pcaPurity > 0.4, pcaPurity.toFixed(3));
  await shot('pca_by_class');

  // ---- hover: the label of the point under the mouse ---------------------------------------------
  const target = 1234;
  const at = await page.evaluate((i) => window.__projector.projector.screenOf(i), target);
  await page.mouse.move(at.x, at.y);
  const hovered = await until(page, () => { const t = document.querySelector('.projector-tooltip'); return !t.hidden && t.dataset.index; }, null, 15000);
  const tip = await page.$eval('.projector-tooltip', (t) => t.textContent);
  check('hover: the tooltip names the point, its class and its other columns',
    hovered !== null && tip === `${labels[+hovered]}#${hovered}label: ${meta.rows[+hovered][1]}`, `${hovered} ${tip}`);

  // ---- click: the nearest neighbours in the original space -----------------------------------------
  await page.mouse.click(at.x, at.y);
  await until(page, () => document.querySelectorAll('#projector-nn li').length === 10, null, 5000);
  const picked = +(await dataset()).picked;
  const nnOf = async () => page.$$eval('#projector-nn li', (lis) => lis.map((li) => [+li.dataset.index, +li.dataset.distance]));
  let got = await nnOf();
  let want = nearest(vectors, 5000, 128, picked, 10, 'cosine');
  check('neighbours: the 10 nearest by cosine distance, as computed from the API\'s vectors',
    JSON.stringify(got.map((g) => g[0])) === JSON.stringify(want.map((w) => w.index)) &&
    got.every((g, k) => Math.abs(g[1] - want[k].distance) < 1e-12), `${JSON.stringify(got)} vs ${JSON.stringify(want)}`);
  want = nearest(vectors, 5000, 128, picked, 10, 'euclidean');
  await page.selectOption('#projector-metric', 'euclidean');
  await until(page, (w) => JSON.stringify([...document.querySelectorAll('#projector-nn li')].map((li) => +li.dataset.index)) === w,
    JSON.stringify(want.map((w) => w.index)), 5000);
  got = await nnOf();
  check('neighbours: the 10 nearest by euclidean distance', JSON.stringify(got.map((g) => g[0])) === JSON.stringify(want.map((w) => w.index)),
    `${JSON.stringify(got)} vs ${JSON.stringify(want)}`);
  const nnText = await page.$eval('#projector-info', (el) => el.textContent);
  check('neighbours: the list is titled with the point and the distance', nnText.includes(`Nearest to ${labels[picked]} (#${picked}), euclidean`), nnText);
  await shot('neighbours');

  // ---- search and isolate ----------------------------------------------------------------------------
  await page.click('#projector-search');
  await page.keyboard.type('^trouser$');
  await until(page, (n) => document.querySelector('.projector-page').dataset.selected === String(n), counts.Trouser, 5000);
  d = await dataset();
  check('search: a regex selects every trouser (case-insensitive)', d.selected === String(counts.Trouser), JSON.stringify(d));
  const trousers = labels.flatMap((l, i) => (l === 'Trouser' ? [i] : []));
  // how far apart the trousers are on screen (the larger side of their box, px)
  const span = () => page.evaluate((idx) => {
    const at = idx.map((i) => window.__projector.projector.screenOf(i));
    const side = (k) => Math.max(...at.map((p) => p[k])) - Math.min(...at.map((p) => p[k]));
    return Math.max(side('x'), side('y'));
  }, trousers);
  const spanBefore = await span();
  await page.click('#projector-isolate');
  await until(page, (n) => document.querySelector('.projector-page').dataset.projectedPoints === n &&
    !window.__projector.projector.animating, String(trousers.length), 15000);
  d = await dataset();
  check('isolate: only the selection is shown', d.isolated === String(counts.Trouser), JSON.stringify(d));
  // the PCA runs again on the trousers alone: NumPy's shares of their own variance
  const isoVariance = await page.$eval('#projector-info', (el) => el.dataset.variance);
  const isoNumpy = numpyRatios(trousers);
  check('isolate: PCA re-projects the isolated points alone (shares of variance as NumPy\'s of those rows)',
    d.projectedPoints === String(trousers.length) && isoVariance === isoNumpy && isoNumpy !== numpy, `${isoVariance} vs ${isoNumpy}`);
  const isoStatus = await page.$eval('#projector-status', (el) => el.textContent);
  const isoTitle = await page.$eval('#projector-pca-title', (el) => el.textContent);
  check('isolate: the status and the variance\'s title say what was projected', isoStatus === `PCA of the ${trousers.length} isolated points of dimension 128` &&
    isoTitle === `PCA of the ${trousers.length} isolated points`, `${isoStatus} / ${isoTitle}`);
  const spanAfter = await span(), viewBox = await page.locator('.projector-view').boundingBox();
  check('isolate: the isolated points spread over the view, fitted on their own', spanAfter > 1.5 * spanBefore &&
    spanAfter > 0.6 * Math.min(viewBox.width, viewBox.height), `${spanBefore.toFixed(0)} -> ${spanAfter.toFixed(0)} px`);
  await shot('isolated');
  await page.click('#projector-show-all');
  await until(page, () => document.querySelector('.projector-page').dataset.projectedPoints === '5000', null, 15000);
  check('show all: PCA of every point again', (await page.$eval('#projector-info', (el) => el.dataset.variance)) === numpy);
  await page.fill('#projector-search', '');

  // ---- 3D: a drag rotates the view ---------------------------------------------------------------------
  await page.click('#projector-3d');
  await page.click('#projector-sprites');
  await until(page, () => !window.__projector.projector.animating, null, 5000);
  const frames0 = +(await page.$eval('.projector-view', (v) => v.dataset.frames));
  const box = await page.locator('.projector-view').boundingBox();
  await page.mouse.move(box.x + box.width / 2, box.y + box.height / 2);
  await page.mouse.down();
  for (let k = 1; k <= 10; k++) await page.mouse.move(box.x + box.width / 2 + 25 * k, box.y + box.height / 2 + 6 * k);
  await page.mouse.up();
  const frames1 = await until(page, (f) => +document.querySelector('.projector-view').dataset.frames > f + 3 && document.querySelector('.projector-view').dataset.frames, frames0, 5000);
  check('3D: dragging redraws the rotated view', frames1 !== null, `${frames0} -> ${frames1}`);
  await shot('3d_sprites');

  // ---- steps: the slider moves the points ----------------------------------------------------------------
  const before = await page.evaluate(() => Array.from(window.__projector.shown.subarray(0, 30)));
  await page.focus('#projector-step');
  await page.keyboard.press('Home');
  await until(page, (s) => document.querySelector('.projector-page').dataset.projectedStep === s && !window.__projector.projector.animating, String(list.steps[0].step), 30000);
  const after = await page.evaluate(() => Array.from(window.__projector.shown.subarray(0, 30)));
  check('steps: the first epoch\'s points are shown, elsewhere', (await dataset()).step === String(list.steps[0].step) &&
    before.some((v, k) => Math.abs(v - after[k]) > 1e-3), `${before.slice(0, 3)} -> ${after.slice(0, 3)}`);
  await page.keyboard.press('End');
  await until(page, (s) => document.querySelector('.projector-page').dataset.projectedStep === s, String(last), 30000);

  // ---- t-SNE: runs in a worker to its last iteration, animated -----------------------------------------------
  await page.click('#projector-3d');   // 2D first
  await page.selectOption('#projector-projection', 'tsne');
  await page.fill('#tsne-iterations', '500');
  await page.locator('#tsne-iterations').press('Tab');
  await page.click('#projector-run-projection');
  const seen = new Set();
  const done = await until(page, () => {
    const v = document.querySelector('.projector-page').dataset;
    (window.__iterations ??= new Set()).add(v.iteration);
    return v.projection === 'tsne' && v.running === 'false' && v.iteration === '500';
  }, null, 300000);
  for (const it of await page.evaluate(() => [...(window.__iterations ?? [])])) seen.add(it);
  check('t-SNE: runs to iteration 500', done === true, JSON.stringify(await dataset()));
  check('t-SNE: positions arrive as it goes (animated)', seen.size >= 3, [...seen].join(','));
  const tsnePos = await page.evaluate(() => Array.from(window.__projector.shown));
  const tsnePurity = purity(Float32Array.from(tsnePos), labels, 5000);
  check('t-SNE: separates the classes better than PCA', tsnePurity > pcaPurity, `${tsnePurity.toFixed(3)} vs ${pcaPurity.toFixed(3)}`);
  const status = await page.$eval('#projector-status', (s) => s.textContent);
  check('t-SNE: the status says how many iterations', /^t-SNE: 500 iterations, [\d.]+ s$/.test(status), status);
  check('t-SNE: 2D keeps every z at 0', tsnePos.every((v, k) => k % 3 !== 2 || v === 0));
  await page.click('#projector-sprites');
  await shot('tsne');

  // ---- 3D t-SNE: the 3D box runs it again in three dimensions ----------------------------------------------
  await page.click('#projector-3d');
  const done3 = await until(page, () => {
    const v = document.querySelector('.projector-page').dataset;
    return v.projection === 'tsne' && v.running === 'false' && v.iteration === '500' && !window.__projector.projector.animating;
  }, null, 300000);
  check('3D t-SNE: runs to iteration 500', done3 === true, JSON.stringify(await dataset()));
  const tsne3 = Float32Array.from(await page.evaluate(() => Array.from(window.__projector.shown)));
  let zs = 0, xs = 0;
  for (let i = 0; i < 5000; i++) { zs += tsne3[3 * i + 2] ** 2; xs += tsne3[3 * i] ** 2; }
  check('3D t-SNE: the points spread along z as along x (a third dimension, not a flat sheet)', zs > 0.3 * xs, `${zs.toFixed(1)} vs ${xs.toFixed(1)}`);
  const purity3 = purity(tsne3, labels, 5000);
  check('3D t-SNE: separates the classes better than PCA', purity3 > pcaPurity, `${purity3.toFixed(3)} vs ${pcaPurity.toFixed(3)}`);
  check('3D t-SNE: the view is the 3D one', await page.evaluate(() => window.__projector.projector.mode) === '3d');
  await shot('tsne_3d');

  // ---- isolating during t-SNE runs t-SNE again on the isolated points alone ---------------------------------
  await page.click('#projector-search');
  await page.keyboard.type('^(trouser|bag)$');
  const pair = labels.flatMap((l, i) => (l === 'Trouser' || l === 'Bag' ? [i] : []));
  await until(page, (n) => document.querySelector('.projector-page').dataset.selected === n, String(pair.length), 5000);
  await page.click('#projector-isolate');
  const doneIso = await until(page, () => {
    const v = document.querySelector('.projector-page').dataset;
    return v.running === 'false' && v.iteration === '500' && v.projectedPoints !== '5000' && !window.__projector.projector.animating;
  }, null, 300000);
  const isoTsneStatus = await page.$eval('#projector-status', (el) => el.textContent);
  check('isolate: t-SNE runs again on the isolated points only', doneIso === true &&
    new RegExp(`^t-SNE: 500 iterations \\(the ${pair.length.toLocaleString('en-US')} isolated points\\), [\\d.]+ s$`).test(isoTsneStatus), isoTsneStatus);
  const isoTsne = await page.evaluate(() => Array.from(window.__projector.shown));
  d = await dataset();
  check('isolate: the trousers and bags alone are shown', d.isolated === String(pair.length) && d.projectedPoints === String(pair.length),
    JSON.stringify(d));
  const bagOf = new Set(pair.filter((i) => labels[i] === 'Bag'));
  let pairPure = 0;
  const pairPos = new Float32Array(pair.length * 3);
  pair.forEach((i, k) => pairPos.set(isoTsne.slice(3 * i, 3 * i + 3), 3 * k));
  for (let k = 0; k < pair.length; k += 5) {
    const nn = nearest(pairPos, pair.length, 3, k, 10, 'euclidean');
    pairPure += nn.filter((r) => bagOf.has(pair[r.index]) === bagOf.has(pair[k])).length / 10;
  }
  pairPure /= Math.ceil(pair.length / 5);
  check('isolate: t-SNE of trousers and bags alone keeps them apart', pairPure > 0.9, pairPure.toFixed(3));
  await shot('isolated_tsne_3d');
  await page.click('#projector-show-all');
  await page.fill('#projector-search', '');
  await page.click('#projector-sprites');

  // ---- UMAP: stoppable -----------------------------------------------------------------------------------------
  await page.selectOption('#projector-projection', 'umap');   // choosing it starts it, as Run does
  await until(page, () => document.querySelector('.projector-page').dataset.running === 'true' &&
    +document.querySelector('.projector-page').dataset.iteration > 0, null, 120000);
  await page.click('#projector-stop');
  d = await dataset();
  const stopped = await page.$eval('#projector-status', (s) => s.textContent);
  check('UMAP: Stop ends the run where it is', d.running === 'false' && /^UMAP stopped at iteration \d+$/.test(stopped), `${stopped} ${JSON.stringify(d)}`);
  await page.waitForTimeout(500);
  check('UMAP: nothing arrives after Stop', (await page.$eval('#projector-status', (s) => s.textContent)) === stopped);
  await shot('umap_stopped');

  check('no console errors, page errors or failed requests', errors.length === 0, errors.join('\n'));
}

await finishSuite('projector_browser', main, { browser, server, work, started });
