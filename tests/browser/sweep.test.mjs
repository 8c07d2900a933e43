// sweep.test.mjs — a real sweep on both comparing pages: examples/
// hparam_sweep trains 12 short Fashion-MNIST runs into one store (its
// hparams recorded by fit's summary callback, the experiment declared
// once, each class's PR curve on the validation images at epochs 0 and
// 1); `glassbox serve` serves it and Debian's chromium (playwright-core)
// opens it with the real mouse and keyboard. HParams: the table sorted by
// validation accuracy with a click, best first, against /api/hparams.
// PR Curves: a card per Fashion-MNIST class, the Shirt card's slider
// moved to step 0 and back to step 1 with the keyboard, the AUC in its
// legend equal to the area the API's precision and recall give, and the
// hover card's threshold and counts the API's for the point under the
// mouse. Screenshots: <build>/tests/artifacts/sweep_*.png.

import path from 'node:path';
import fs from 'node:fs';
import { apiJSON, ARTIFACTS, BUILD, check, finishSuite, launchBrowser, requireBrowser, run, startServer, tabLoaded, tempDir, until, watchedPage } from './lib.mjs';

requireBrowser('webui_sweep_browser');
const work = tempDir('gb-sweep-');
const db = path.join(work, 'sweep.db');
fs.mkdirSync(ARTIFACTS, { recursive: true });
const started = Date.now();
run(path.join(BUILD, 'examples/hparam_sweep'), ['--db', db, '--runs', '12', '--epochs', '2'], 240000);

const server = await startServer(db);
const browser = await launchBrowser(path.join(work, 'profile'));
const { page, errors } = await watchedPage(browser, { width: 1400, height: 1000 });
const shot = (name, el) => (el ?? page).screenshot({ path: path.join(ARTIFACTS, `sweep_${name}.png`) });
const CLASSES = ['Ankle boot', 'Bag', 'Coat', 'Dress', 'Pullover', 'Sandal', 'Shirt', 'Sneaker', 'T-shirt/top', 'Trouser'];

// The area under a curve as the page computes it, from the API's values.
function auc(precision, recall) {
  let area = 0, pr = null;
  for (let i = recall.length - 1; i >= 0; i--) {
    if (precision[i] === 0 && recall[i] === 0) continue;
    if (!pr) pr = [precision[i], 0];
    area += (recall[i] - pr[1]) * (precision[i] + pr[0]) / 2;
    pr = [precision[i], recall[i]];
  }
  return area;
}

async function main() {
  const api = await apiJSON(server, 'hparams');
  check('api: 12 runs, declared, every one done', api.runs.length === 12 && api.declared &&
    api.runs.every((r) => r.status === 'done'), JSON.stringify(api.runs.map((r) => r.status)));
  check('api: the callback recorded the hparams', api.runs.every((r) => typeof r.hparams['optimizer.learning_rate'] === 'number' &&
    typeof r.hparams.batch_size === 'number' && typeof r.hparams.optimizer === 'string' && typeof r.hparams['dropout0.rate'] === 'number'),
  JSON.stringify(api.runs[0].hparams));
  const va = api.metrics.findIndex((m) => m.tag === 'epoch/val_accuracy');
  const byAcc = [...api.runs].sort((a, b) => b.metrics[va][0] - a.metrics[va][0]).map((r) => r.name);

  await page.goto(server.url);
  check('shell: ready', await until(page, () => window.__glassbox?.ready, null, 10000));
  await page.click('a[data-tab="hparams"]');
  check('hparams: page loads', await tabLoaded(page, 'hparams', 10000));
  await page.click('.hp-table th[data-key="m:epoch/val_accuracy"]');
  const rows = await page.$$eval('.hp-table tbody tr[data-run]', (trs) => trs.map((t) => t.dataset.run));
  check('hparams: the sweep sorted by validation accuracy, best first', JSON.stringify(rows) === JSON.stringify(byAcc), `${rows} vs ${byAcc}`);
  await shot('hparams_sorted', page.locator('[data-section="table"]'));
  await page.locator('[data-section="parcoords"]').scrollIntoViewIfNeeded();
  await shot('hparams_parcoords', page.locator('[data-section="parcoords"]'));

  // ---- PR curves ---------------------------------------------------------------------------
  await page.click('a[data-tab="pr_curves"]');
  check('pr: page loads', await tabLoaded(page, 'pr_curves', 10000));
  const cards = await page.$$eval('.card[data-tag]', (cs) => cs.map((c) => c.dataset.tag));
  check('pr: a card per Fashion-MNIST class', JSON.stringify(cards) === JSON.stringify(CLASSES.map((c) => `pr/${c}`)), cards.join());
  const card = page.locator('.card[data-tag="pr/Shirt"]');
  await card.scrollIntoViewIfNeeded();
  check('pr: the Shirt card loads at the last step', await until(page, () => document.querySelector('.card[data-tag="pr/Shirt"]')?.dataset.step === '1', null, 10000));
  const series = Object.fromEntries(await Promise.all(api.runs.map(async (r) =>
    [r.name, (await apiJSON(server, 'pr_curves/series', { run: r.name, tag: 'pr/Shirt', points: 200 })).rows])));
  const legendAuc = () => page.$$eval('.card[data-tag="pr/Shirt"] .legend-item', (ls) => Object.fromEntries(ls.map((l) => [l.dataset.run, +l.dataset.auc])));
  const aucOk = (got, step) => api.runs.every((r) => {
    const row = series[r.name].find((x) => x.step === step);
    return Math.abs(got[r.name] - auc(row.precision, row.recall)) < 1e-12;
  });
  check('pr: the AUC of every run at step 1 is the API curve\'s area', aucOk(await legendAuc(), 1));
  await shot('pr_shirt_step1', card);

  await card.locator('input[type=range]').focus();
  await page.keyboard.press('Home');
  check('pr: the slider moves to step 0', await until(page, () => document.querySelector('.card[data-tag="pr/Shirt"]')?.dataset.step === '0'));
  check('pr: the AUC at step 0 is the API curve\'s area', aucOk(await legendAuc(), 0));
  const stepText = await card.locator('.pr-step').textContent();
  check('pr: the card says which step', stepText === 'step 0 (1/2)', stepText);
  await shot('pr_shirt_step0', card);
  await page.keyboard.press('End');
  check('pr: and back to step 1', await until(page, () => document.querySelector('.card[data-tag="pr/Shirt"]')?.dataset.step === '1'));

  // Hover over the middle of the plot: the card names the point; the tooltip shows its numbers.
  const plot = await card.locator('canvas.pr-canvas').boundingBox();
  const best = series[byAcc[0]].find((x) => x.step === 1);
  const i = 50, px = plot.x + 44 + best.recall[i] * (plot.width - 56), py = plot.y + 10 + (1 - best.precision[i]) * (300 - 44);
  await page.mouse.move(px - 30, py + 30);
  await page.mouse.move(px, py, { steps: 5 });
  const hover = await until(page, () => document.querySelector('.card[data-tag="pr/Shirt"]')?.dataset.hover, null, 15000);
  const tip = (await card.locator('.pr-tip').textContent()) ?? '';
  let tipOk = false;
  if (hover) {
    const h = JSON.parse(hover);
    const row = series[h.run].find((x) => x.step === h.step);
    const f = (v) => (Number.isInteger(v) ? String(v) : v.toFixed(3));
    tipOk = tip.includes(`threshold ${(h.index / (row.thresholds - 1)).toFixed(3)}`) &&
      tip.includes(`precision ${row.precision[h.index].toFixed(4)} · recall ${row.recall[h.index].toFixed(4)}`) &&
      tip.includes(`TP ${f(row.tp[h.index])} · FP ${f(row.fp[h.index])} · TN ${f(row.tn[h.index])} · FN ${f(row.fn[h.index])}`) &&
      row.tp[h.index] + row.fp[h.index] + row.tn[h.index] + row.fn[h.index] === 2000;
  }
  check('pr: hover shows the point\'s threshold, precision, recall and counts (the API\'s)', tipOk, `${hover} ${tip}`);
  await shot('pr_shirt_hover', card);
  check('console: no errors', errors.length === 0, errors.join('\n'));
}

await finishSuite('sweep browser test', main, { browser, server, work, started });
