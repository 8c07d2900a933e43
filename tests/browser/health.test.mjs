// health.test.mjs — the Health page end to end, as a person looking for
// why a training went wrong uses it: write_health writes two runs through
// the real default writer (the engine's GB_EVENT_HEALTH alerts and
// health/<layer>/<figure> scalars, emitted with gb_observer_emit),
// `glassbox serve` serves them, Debian's chromium (playwright-core) opens
// the dashboard with the real mouse and keyboard. Checks the alert rows
// (most severe first, then earliest, a repeated alert once; badge, kind,
// layer and variable, step, figures, message, advice) against what was written; the heat
// map's size, the values it shows under the mouse against the numbers
// written, and the vanishing gradients as a dark band at the input side;
// the figure and run selectors; an alert written while the page is open
// showing without a reload; an alert's link to its layer's charts on the
// Scalars page and to its scope on the Graphs page. Every wait is bounded
// at 15 s and none is a verdict on speed. Screenshots:
// <build>/tests/artifacts/health_*.png.

import path from 'node:path';
import fs from 'node:fs';
import { apiJSON, ARTIFACTS, BUILD, check, finishSuite, launchBrowser, requireBrowser, run, startServer, tabLoaded, tempDir, until, watchedPage } from './lib.mjs';

requireBrowser('webui_health_browser');
const work = tempDir('gb-health-');
const db = path.join(work, 'health.db');
fs.mkdirSync(ARTIFACTS, { recursive: true });
const started = Date.now();
const writer = path.join(BUILD, 'tests/write_health');
run(writer, [db], 60000);

const server = await startServer(db);
const browser = await launchBrowser(path.join(work, 'profile'));
const { page, errors } = await watchedPage(browser);
const shot = (name, el) => (el ?? page).screenshot({ path: path.join(ARTIFACTS, `health_${name}.png`) });
const WAIT = 15000;

// What write_health.c writes (its header says the same).
const GRAD = [2e-7, 1.5e-6, 1.1e-5, 8e-5, 6e-4, 4e-3, 3e-2, 2e-1];
const SAT = [0.91, 0.85, 0.7, 0.4, 0.2, 0.1, 0.05];
const deepGrad = (i, s) => GRAD[i] * (1 + (s % 7) / 100);
const reluDead = (i, s) => (i === 3 ? (s >= 60 ? 0.97 : 0.1) : (i % 3) / 20);

const rows = () => page.$$eval('.health-alert', (els) => els.map((e) => ({
  kind: e.dataset.kind, severity: e.dataset.severity, layer: e.dataset.layer, step: e.dataset.step,
  badge: e.querySelector('.sev-badge').textContent, title: e.querySelector('.alert-kind').textContent,
  where: e.querySelector('.alert-where').textContent, stepText: e.querySelector('.alert-step').textContent,
  message: e.querySelector('.health-message')?.textContent, advice: e.querySelector('.alert-advice')?.textContent,
  facts: Object.fromEntries([...e.querySelectorAll('.fact')].map((f) => [f.dataset.key, f.querySelector('.fact-value').textContent])),
})));

// The mouse on cell (row, col) of the heat map; resolves to the hover box's
// layer, step and value once it shows that cell.
async function hoverCell(row, col) {
  const canvas = page.locator('#health-heatmap');
  const box = await canvas.boundingBox();
  const g = await canvas.evaluate((c) => ({ left: +c.dataset.left, cw: +c.dataset.cellWidth, rh: +c.dataset.rowHeight }));
  await page.mouse.move(box.x + g.left + (col + 0.5) * g.cw, box.y + (row + 0.5) * g.rh);
  return until(page, ([r, k]) => {
    const t = document.getElementById('health-tip');
    const m = window.__glassbox && document.getElementById('health-heatmap');
    if (!t || t.hidden || !m || t.dataset.row !== String(r) || t.dataset.col !== String(k)) return null;
    return { layer: t.dataset.layer, step: +t.dataset.step, value: t.dataset.value === '' ? null : +t.dataset.value, text: t.textContent, r, k };
  }, [row, col], WAIT);
}

// The canvas's colour at the centre of cell (row, col), as drawn.
function cellColour(row, col) {
  return page.locator('#health-heatmap').evaluate((c, [r, k]) => {
    const dpr = c.width / c.clientWidth;
    const x = (+c.dataset.left + (k + 0.5) * +c.dataset.cellWidth) * dpr, y = (r + 0.5) * +c.dataset.rowHeight * dpr;
    return [...c.getContext('2d').getImageData(Math.floor(x), Math.floor(y), 1, 1).data.slice(0, 3)];
  }, [row, col]);
}
const luminance = ([r, g, b]) => 0.2126 * r + 0.7152 * g + 0.0722 * b;

const heatIs = (figure, layers, columns) => until(page, ([f, l, c]) => {
  const m = document.getElementById('health-heatmap')?.dataset;
  return m && m.figure === f && m.layers === String(l) && m.columns === String(c);
}, [figure, layers, columns], WAIT);

async function main() {
  const api = await apiJSON(server, 'health/alerts', { run: 'sigmoid_deep' });
  check('api: sigmoid_deep has 8 alerts, 2 critical', api.total === 8 && api.critical === 2, JSON.stringify(api).slice(0, 300));

  await page.goto(server.url);
  check('shell: ready', await until(page, () => window.__glassbox?.ready, null, WAIT));
  await page.click('a[data-tab="health"]');
  check('health: page loads', await tabLoaded(page, 'health', WAIT));
  check('health: opens on the run with the most critical alerts', await page.$eval('#health-run', (s) => s.value) === 'sigmoid_deep');

  // ---- the alerts: most severe first, then earliest, as written ------------------------------
  const got = await rows();
  const want = [
    ['vanishing_gradient', 'critical', 'dense', '50', 'dense · dense/kernel'],
    ['vanishing_gradient', 'critical', 'dense_1', '50', 'dense_1 · dense_1/kernel'],
    ['saturated_units', 'warning', 'dense', '20', 'dense'],
    ['not_learning', 'warning', 'dense', '100', 'dense · dense/kernel'],
    ['loss_spike', 'info', '', '140', 'the model'],
    ['loss_recovered', 'info', '', '160', 'the model'],
  ];
  check('alerts: six rows (a repeated alert once), most severe first, then by step',
    JSON.stringify(got.map((r) => [r.kind, r.severity, r.layer, r.step, r.where])) === JSON.stringify(want),
    JSON.stringify(got.map((r) => [r.kind, r.severity, r.layer, r.step, r.where])));
  const first = got[0];
  check('alerts: the first says what, where and when', first.badge === 'critical' && first.title === 'Vanishing gradient' &&
    first.stepText === 'step 50', JSON.stringify(first));
  check('alerts: the message and the advice as written',
    first.message === 'dense/kernel: gradient norm 2.1e-07, 0.13x the layer above, 1e-4 of the last layer\'s' &&
    first.advice === 'Gradients vanish on the way back to the input. Use ReLU instead of sigmoid, He initialization, residual connections or batch normalization.',
    JSON.stringify(first));
  check('alerts: the figures as written', first.facts.value === '2.100e-7' && first.facts.threshold === '0.001' &&
    first.facts['grad norm'] === '2.100e-7' && first.facts.above === '1.575e-6' && first.facts['ratio to above'] === '0.1333',
    JSON.stringify(first.facts));
  check('alerts: the saturation row\'s figures', got[2].facts['saturated fraction'] === '0.91' && got[2].facts.units === '128', JSON.stringify(got[2].facts));
  check('alerts: a model-wide alert has no layer links',
    await page.$$eval('.health-alert[data-kind="loss_spike"] .alert-links a', (a) => a.length) === 0);
  check('alerts: an alert raised three times is one row that says so', got[3].stepText === '×3 · steps 100–200', got[3].stepText);
  check('alerts: summary counts them all', (await page.textContent('.health-summary')) === '8 alerts in sigmoid_deep · 2 critical, 4 warning, 2 info',
    await page.textContent('.health-summary'));
  await shot('alerts', page.locator('.health-alerts'));

  // ---- the heat map: gradient norms, 8 layers x 60 steps -------------------------------------
  check('heat map: 8 layers, a column per measured step', await heatIs('grad_norm', 8, 60));
  await page.locator('.health-heat').scrollIntoViewIfNeeded();
  for (const [row, col] of [[0, 0], [0, 13], [3, 33], [7, 59]]) {
    const tip = await hoverCell(row, col);
    const s = col * 5;
    check(`heat map: hover (${row}, ${col}) shows the value written`, tip && tip.layer === ['dense', 'dense', 'dense_3', 'logits'][[0, 0, 3, 7].indexOf(row)] &&
      tip.step === s && tip.value === deepGrad(row, s), JSON.stringify(tip));
  }
  const tip = await hoverCell(0, 13);
  check('heat map: the hover box says layer, step and value', tip?.text === `densestep 65grad_norm ${(deepGrad(0, 65)).toExponential(3)}`, tip?.text);
  const marked = await hoverCell(0, 10);
  check('heat map: the alerts of a cell are marked and named', marked?.step === 50 &&
    marked.text.endsWith('critical: vanishing gradient at step 50'), marked?.text);
  const lum = [];
  for (let r = 0; r < 8; r++) lum.push(luminance(await cellColour(r, 30)));
  check('heat map: vanishing gradients are a dark band at the input side (luminance rises layer by layer)',
    lum.every((v, i) => i === 0 || v > lum[i - 1]) && lum[7] - lum[0] > 120, JSON.stringify(lum.map(Math.round)));
  check('heat map: a legend on a log scale', (await page.textContent('#health-legend')).includes('grad_norm, log scale'));
  await shot('heatmap', page.locator('.health-heat'));

  await page.mouse.move(5, 5);
  await shot('page');

  // ---- another figure --------------------------------------------------------------------------
  await page.selectOption('#health-figure', 'saturated_fraction');
  check('heat map: saturated units of the 7 sigmoid layers', await heatIs('saturated_fraction', 7, 60));
  const sat = await hoverCell(1, 5);
  check('heat map: dense_1 is 85% saturated', sat?.layer === 'dense_1' && sat.value === SAT[1] && sat.step === 25, JSON.stringify(sat));

  // ---- the other run: dead ReLUs ------------------------------------------------------------
  await page.selectOption('#health-run', 'relu_dead');
  check('run: relu_dead\'s two alerts', await until(page, () => document.querySelector('.health-page')?.dataset.run === 'relu_dead' &&
    document.querySelectorAll('.health-alert').length === 2, null, WAIT));
  check('heat map: back to gradient norms, 6 layers x 30 steps', await heatIs('grad_norm', 6, 30));
  await page.selectOption('#health-figure', 'dead_fraction');
  check('heat map: dead units of 5 layers', await heatIs('dead_fraction', 5, 30));
  const before = await hoverCell(3, 5), after = await hoverCell(3, 6), conv = await hoverCell(0, 0);
  check('heat map: dense_1 dies at step 60', before?.layer === 'dense_1' && before.step === 50 && before.value === reluDead(3, 50) &&
    after?.step === 60 && after.value === reluDead(3, 60), JSON.stringify([before, after]));
  check('heat map: a layer named with a path', conv?.layer === 'block/conv' && conv.value === reluDead(0, 0), JSON.stringify(conv));
  await page.mouse.move(5, 5);
  await shot('heatmap_dead', page.locator('.health-heat'));

  // ---- live: an alert and a step written while the page is open ----------------------------
  run(writer, [db, 'append'], 30000);
  check('live: the new alert shows in its place without a reload', await until(page, () =>
    [...document.querySelectorAll('.health-alert')].map((e) => `${e.dataset.kind}@${e.dataset.step}`).join() ===
      'dead_units@60,exploding_gradient@300,dead_units@120', null, WAIT),
  await page.$$eval('.health-alert', (els) => els.map((e) => `${e.dataset.kind}@${e.dataset.step}`).join()));
  check('live: the heat map gains the step', await heatIs('dead_fraction', 5, 31));

  // ---- links: the layer's charts and its scope in the graph -------------------------------------
  const graphHref = await page.getAttribute('.health-alert[data-layer="dense_1"] a.health-graph', 'href');
  check('links: the layer on the Graphs page', graphHref === '#graphs?run=relu_dead&scope=dense_1', graphHref);
  await page.click('.health-alert[data-layer="dense_1"] a.health-graph');
  check('links: the Graphs page opens', await tabLoaded(page, 'graphs', WAIT));
  const selected = await until(page, () => document.querySelector('.page')?.dataset.selected, null, WAIT);
  check('links: the layer\'s scope is selected in the train step\'s graph', /(^|\/)sequential\/dense_1$/.test(selected ?? ''), selected);
  await shot('graph_link');
  await page.goBack();
  check('links: back to the Health page', await tabLoaded(page, 'health', WAIT));
  await page.click('.health-alert[data-layer="dense_1"] a.health-charts');
  check('links: the Scalars page opens', await tabLoaded(page, 'scalars', WAIT));
  const tags = await until(page, () => {
    const t = [...document.querySelectorAll('.card[data-tag]')].map((c) => c.dataset.tag).sort();
    return t.length ? t : null;
  }, null, WAIT);
  check('links: filtered to dense_1\'s health figures', JSON.stringify(tags) ===
    JSON.stringify(['health/dense_1/dead_fraction', 'health/dense_1/grad_norm', 'health/dense_1/update_ratio']), JSON.stringify(tags));
  check('links: the tag filter says so', await page.inputValue('#tag-filter') === '^health/dense_1/');
  await shot('scalars_link');

  check('no console errors or failed requests', errors.length === 0, errors.join('\n'));
}

await finishSuite('webui_health_browser', main, { browser, server, work, started });
