// dashboard.test.mjs — the dashboard end to end, as a person uses it:
// a store written by examples/summary_showcase, `glassbox serve` on a free
// loopback port, Debian's chromium (playwright-core). Checks that every
// page draws its charts with the right number of series and points, that
// the run filter and smoothing change what is drawn, that a scalar written
// while the page is open appears within 2 s, that histogram cards below the
// fold say they are loading and fetch their series once (lazy.mjs), that
// every tab stays reachable in a narrow window, and that the console
// stays free of errors. Screenshots:
// <build>/tests/artifacts/dashboard-*.png.

import fs from 'node:fs';
import path from 'node:path';
import { checkBelowFold, checkEmptyBlock, checkFetchedOnce, countSeriesRequests, scrollThrough } from './lazy.mjs';
import { ARTIFACTS, BUILD, check, finishSuite, launchBrowser, requireBrowser, run, startServer, tabLoaded, tempDir, until } from './lib.mjs';

requireBrowser('webui_browser');
const work = tempDir('gb-browser-');
const db = path.join(work, 'showcase.db');
fs.mkdirSync(ARTIFACTS, { recursive: true });
run(path.join(BUILD, 'examples/summary_showcase'), ['--db', db]);
// More histogram tags in one run, so that the last cards start below the fold.
// (Cards share rows and are as tall as their curves: it takes a dozen.)
const EXTRA_TAGS = Array.from({ length: 12 }, (_, i) => `extra/${String(i + 1).padStart(2, '0')}`);
for (const tag of EXTRA_TAGS) run(path.join(BUILD, 'tests/append_histogram'), [db, 'mlp-sgd-lr0.1', tag, '12']);

const server = await startServer(db);
const browser = await launchBrowser(path.join(work, 'profile'));
const page = browser.pages()[0] || await browser.newPage();
const errors = [];
page.on('console', (m) => { if (m.type() === 'error') errors.push(`console: ${m.text()}`); });
page.on('pageerror', (e) => errors.push(`page error: ${e.message}`));
page.on('response', (r) => { if (r.status() >= 400) errors.push(`HTTP ${r.status()} ${r.url()}`); });

const api = async (p) => (await fetch(new URL(`api/${p}`, server.url))).json();
const shot = (name) => page.screenshot({ path: path.join(ARTIFACTS, `dashboard-${name}.png`) });

// Non-white pixels of a canvas: a chart that drew nothing has almost none.
const inked = (sel) => page.$eval(sel, (c) => {
  const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
  let n = 0;
  for (let i = 0; i < d.length; i += 4) if (d[i + 3] > 0 && (d[i] < 235 || d[i + 1] < 235 || d[i + 2] < 235)) n++;
  return n;
});
const pixels = (sel) => page.$eval(sel, (c) => c.toDataURL());
const LOSS_CANVAS = '.card[data-tag="loss"] .u-wrap canvas';

async function openTab(name) {
  await page.click(`a[data-tab="${name}"]`);
  const ok = await tabLoaded(page, name);
  check(`${name}: page loads`, ok);
}

// The shell: a tab per active dashboard, every run, the live stream.
async function checkShell(runs) {
  await page.goto(server.url);
  check('shell: ready', await until(page, () => window.__glassbox?.ready && document.querySelector('.page')?.dataset.loaded === 'true'));
  const tabs = await page.$$eval('a.tab', (as) => as.map((a) => a.dataset.tab));
  check('shell: a tab per active dashboard', JSON.stringify(tabs) === JSON.stringify(['scalars', 'histograms', 'distributions', 'images', 'text', 'graphs', 'traces', 'hparams', 'numerics']), tabs.join(','));
  check('shell: every run listed', (await page.$$eval('#run-list .run', (l) => l.map((x) => x.dataset.run))).join() === runs.join());
  check('shell: live stream connected', await until(page, () => document.getElementById('live').classList.contains('on')));
}

// Scalars: a card per tag, every run and point drawn, NaN/Inf markers.
async function checkScalarCards(scalarTags, tagNames) {
  const cards = await page.$$eval('.card[data-tag]', (cs) => cs.map((c) => ({
    tag: c.dataset.tag, runs: +c.dataset.runs, series: +c.dataset.series, points: JSON.parse(c.dataset.points || '{}'), markers: +c.dataset.markers })));
  check('scalars: one card per tag', JSON.stringify(cards.map((c) => c.tag)) === JSON.stringify(tagNames), cards.map((c) => c.tag).join());
  for (const c of cards) {
    const want = Object.entries(scalarTags).filter(([, ts]) => ts.some((t) => t.tag === c.tag));
    check(`scalars/${c.tag}: ${want.length} runs overlaid`, c.runs === want.length, `${c.runs}`);
    check(`scalars/${c.tag}: raw + smoothed series per run`, c.series === 2 * want.length, `${c.series}`);
    const pointsOk = want.every(([run, ts]) => c.points[run] === Math.min(1000, ts.find((t) => t.tag === c.tag).count));
    check(`scalars/${c.tag}: every point drawn`, pointsOk, JSON.stringify(c.points));
  }
  const loss = cards.find((c) => c.tag === 'loss');
  check('scalars/loss: NaN and +Inf shown as markers', loss?.markers === 2, `${loss?.markers}`);
  check('scalars/loss: chart drawn', (await inked(LOSS_CANVAS)) > 2000);
  await shot('scalars');
}

// Tooltip: run, step, value, smoothed.
async function checkTooltip(runs) {
  const over = await page.$('.card[data-tag="accuracy"] .u-over');
  const box = await over.boundingBox();
  await page.mouse.move(box.x + box.width * 0.5, box.y + box.height * 0.5);
  const tip = await until(page, () => { const t = document.querySelector('.card[data-tag="accuracy"] .tooltip'); return t && !t.hidden && t.textContent; });
  check('scalars: tooltip shows run, step, value, smoothed', !!tip && runs.every((r) => tip.includes(r)) && /step \d+/.test(tip) && tip.includes('smoothed'), tip);
  await shot('scalars-tooltip');
  await page.mouse.move(5, 5);
}

// Smoothing changes the drawing.
async function checkSmoothing() {
  const before = await pixels(LOSS_CANVAS);
  await page.$eval('#smoothing', (el) => { el.value = '0'; el.dispatchEvent(new Event('input')); });
  await page.waitForTimeout(100);
  const raw = await pixels(LOSS_CANVAS);
  check('scalars: smoothing 0.6 -> 0 redraws', raw !== before);
  await page.$eval('#smoothing', (el) => { el.value = '0.95'; el.dispatchEvent(new Event('input')); });
  await page.waitForTimeout(100);
  check('scalars: smoothing 0.95 differs again', (await pixels(LOSS_CANVAS)) !== raw && (await pixels(LOSS_CANVAS)) !== before);
  await page.$eval('#smoothing', (el) => { el.value = '0.6'; el.dispatchEvent(new Event('input')); });
}

// Run filter.
async function checkRunFilter(runs, tagNames) {
  await page.fill('#run-filter', '^mlp-adam');
  check('run filter: one run left per card', await until(page, () => [...document.querySelectorAll('.card[data-tag]')].every((c) => c.dataset.runs === '1')));
  check('run filter: run list filtered', (await page.$$('#run-list .run')).length === 1);
  await shot('scalars-run-filter');
  await page.fill('#run-filter', '([');
  check('run filter: bad regex is marked, nothing breaks', await page.$eval('#run-filter', (i) => i.classList.contains('invalid')));
  await page.fill('#run-filter', '');
  check('run filter: cleared', await until(page, (n) => [...document.querySelectorAll('.card[data-tag]')].every((c) => c.dataset.runs === String(n)), runs.length));
  await page.click('#runs-none');
  check('run selector: none -> no chart', await until(page, () => document.querySelectorAll('.card[data-tag]').length === 0));
  await page.click('#runs-all');
  check('run selector: all -> charts back', await until(page, (n) => document.querySelectorAll('.card[data-tag]').length === n, tagNames.length));
}

// Tag filter, log scale, outliers, x axes.
async function checkScalarOptions(tagNames) {
  await page.fill('#tag-filter', '^loss$');
  check('tag filter: one card', await until(page, () => document.querySelectorAll('.card[data-tag]').length === 1));
  // The card draws its chart once its data has come (it may have been rebuilt).
  check('tag filter: chart drawn', await until(page, (sel) => !!document.querySelector(sel), LOSS_CANVAS));
  const linear = await pixels(LOSS_CANVAS);
  await page.check('#log-scale');
  await until(page, () => true);
  check('log scale redraws', (await pixels(LOSS_CANVAS)) !== linear);
  await page.uncheck('#log-scale');
  await page.check('#ignore-outliers');
  check('ignore outliers rescales', (await pixels(LOSS_CANVAS)) !== linear);
  await shot('scalars-outliers');
  await page.uncheck('#ignore-outliers');
  for (const mode of ['relative', 'wall', 'step']) {
    await page.check(`input[name="x"][value="${mode}"]`);
    check(`x axis ${mode}: chart drawn`, (await inked(LOSS_CANVAS)) > 2000);
  }
  await page.fill('#tag-filter', '');
  await until(page, (n) => document.querySelectorAll('.card[data-tag]').length === n, tagNames.length);
}

// Live: a scalar written now shows up without a reload. (How soon is a
// bench figure, not an assertion: make test runs on loaded machines; the
// 10 s bounds only keep a broken page from hanging the suite.)
async function checkLive(runs) {
  const run0 = runs.find((r) => r.startsWith('mlp-adam'));
  const pointsBefore = await page.$eval('.card[data-tag="loss"]', (c, r) => JSON.parse(c.dataset.points)[r], run0);
  run(path.join(BUILD, 'tests/append_scalar'), [db, run0, 'loss', '250', '0.125']);
  const seen = await until(page, ([r, n]) => JSON.parse(document.querySelector('.card[data-tag="loss"]').dataset.points)[r] === n + 1, [run0, pointsBefore], 10000);
  check('live: a new loss point drawn without a reload', !!seen);
  run(path.join(BUILD, 'tests/append_scalar'), [db, run0, 'live/probe', '1', '42']);
  const card = await until(page, () => !!document.querySelector('.card[data-tag="live/probe"][data-runs="1"]'), null, 10000);
  check('live: a new tag gets its card without a reload', !!card);
}

// CSV and JSON downloads of a card.
async function checkDownloads(runs, scalarTags) {
  const [csv] = await Promise.all([page.waitForEvent('download', { timeout: 5000 }),
    page.click('.card[data-tag="accuracy"] button[title="Download CSV"]')]);
  const csvText = fs.readFileSync(await csv.path(), 'utf8').trim().split('\n');
  const accCount = Object.values(scalarTags).flat().filter((t) => t.tag === 'accuracy').reduce((a, t) => a + t.count, 0);
  check('download: CSV with every point of every run', csvText[0] === 'run,step,wall_time,value' && csvText.length === 1 + accCount, `${csvText.length}`);
  const [json] = await Promise.all([page.waitForEvent('download', { timeout: 5000 }),
    page.click('.card[data-tag="accuracy"] button[title="Download JSON"]')]);
  const jsonObj = JSON.parse(fs.readFileSync(await json.path(), 'utf8'));
  check('download: JSON per run', jsonObj.tag === 'accuracy' && Object.keys(jsonObj.runs).length === runs.length &&
    jsonObj.runs[runs[0]].step.length === scalarTags[runs[0]].find((t) => t.tag === 'accuracy').count);
}

// A long series (new run, written live): downsampled with an envelope,
// and a drag-zoom re-fetches the range at full resolution.
async function checkLongSeries() {
  run(path.join(BUILD, 'tests/append_scalar'), [db, 'long-run', 'long/wave', '0', '1', '20000']);
  const longCard = '.card[data-tag="long/wave"]';
  // Cards load when near the screen: bring the new one into view.
  check('long series: its card is created', await until(page, (s) => !!document.querySelector(s), longCard, 15000));
  await page.$eval(longCard, (c) => c.scrollIntoView());
  check('long series: card appears with all 20000 points (new run, live)', await until(page, (s) =>
    document.querySelector(s)?.dataset.downsampled === 'true' && document.querySelector(s).dataset.total === '20000', longCard, 8000));
  const longPts = await page.$eval(longCard, (c) => JSON.parse(c.dataset.points)['long-run']);
  // At most 1000 buckets, plus the raw points of a last commit that landed
  // after the page fetched the series (the writer commits in batches).
  const longTotal = await page.$eval(longCard, (c) => c.dataset.total);
  check('long series: downsampled (1000 buckets, a raw tail of < 1000 at most)', longPts > 0 && longPts < 2000 && longTotal === '20000', `${longPts} rows, ${longTotal} points`);
  check('long series: envelope series added', await page.$eval(longCard, (c) => c.dataset.series) === '4');
  const zbox = await (await page.$(`${longCard} .u-over`)).boundingBox();
  await page.mouse.move(zbox.x + zbox.width * 0.40, zbox.y + zbox.height / 2);
  await page.mouse.down();
  await page.mouse.move(zbox.x + zbox.width * 0.45, zbox.y + zbox.height / 2, { steps: 5 });
  await page.mouse.up();
  const zoomed = await until(page, (s) => {
    const c = document.querySelector(s);
    return c.dataset.zoomed === 'true' && c.dataset.downsampled === 'false' && JSON.parse(c.dataset.points)['long-run'] > 500;
  }, longCard, 8000);
  check('long series: zoom re-fetches at full resolution', zoomed,
    await page.$eval(longCard, (c) => JSON.stringify(c.dataset)));
  await page.mouse.move(zbox.x + zbox.width * 0.42, zbox.y + zbox.height / 2);
  await shot('scalars-zoomed');
  await page.dblclick(`${longCard} .u-over`);
  check('long series: double click resets the zoom', await until(page, (s) => document.querySelector(s).dataset.downsampled === 'true', longCard));
}

// Every (tag, run) with histograms, and how many steps each holds.
async function histogramBlocks() {
  const byRun = (await api('histograms/tags')).runs;
  return Object.entries(byRun).flatMap(([run, ts]) => ts.map((t) => ({ tag: t.tag, run, count: t.count })));
}

// Histograms: cards below the fold wait for a scroll, each block is fetched
// once; offset and overlay views.
async function checkHistograms() {
  const want = await histogramBlocks();
  const requests = countSeriesRequests(page, 'histograms');
  await openTab('histograms');
  await checkBelowFold(page, 'histograms', EXTRA_TAGS.at(-1), requests);
  await page.screenshot({ path: path.join(ARTIFACTS, 'dashboard-histograms-full.png'), fullPage: true });
  await shot('histograms-offset');
  await scrollThrough(page);
  await scrollThrough(page);   // in and out of view again: nothing re-fetched
  requests.stop();
  checkFetchedOnce('histograms', requests, want);
  const blocks = await page.$$eval('.card[data-tag] .run-block', (bs) => bs.map((b) => ({ tag: b.closest('.card').dataset.tag, run: b.dataset.run, n: +b.dataset.histograms })));
  check('histograms: one block per run and tag', blocks.length === want.length, `${blocks.length} vs ${want.length}`);
  check('histograms: every histogram loaded', want.every((w) => blocks.some((b) => b.tag === w.tag && b.run === w.run && b.n === Math.min(40, w.count))), JSON.stringify(blocks));
  const hist = '.card[data-tag] .run-block canvas';
  check('histograms: offset view drawn', (await inked(hist)) > 3000);
  const offset = await pixels(hist);
  await page.click('#mode-overlay');
  check('histograms: overlay view differs', (await pixels(hist)) !== offset && (await inked(hist)) > 1000);
  await shot('histograms-overlay');
  await page.click('#mode-offset');
  await checkEmptyBlock(page, 'histograms', EXTRA_TAGS[0], { histograms: [] });
}

// Distributions: the same lazy loading; nine percentile series per chart,
// one column per histogram.
async function checkDistributions() {
  const want = await histogramBlocks();
  const requests = countSeriesRequests(page, 'distributions');
  await openTab('distributions');
  await checkBelowFold(page, 'distributions', EXTRA_TAGS.at(-1), requests);
  await page.screenshot({ path: path.join(ARTIFACTS, 'dashboard-distributions-full.png'), fullPage: true });
  await shot('distributions');
  await scrollThrough(page);
  await scrollThrough(page);
  requests.stop();
  checkFetchedOnce('distributions', requests, want);
  const charts = await page.$$eval('.run-block', (bs) => bs.map((b) => ({
    tag: b.closest('.card').dataset.tag, run: b.dataset.run, steps: +b.dataset.steps, series: b.dataset.series, drawn: !!b.querySelector('.u-wrap canvas') })));
  check('distributions: nine percentile series per chart', charts.every((c) => c.series === '9'));
  check('distributions: a chart per run and tag', charts.length === want.length && charts.every((c) => c.drawn), `${charts.length}`);
  check('distributions: one column per histogram', want.every((w) => charts.some((c) => c.tag === w.tag && c.run === w.run && c.steps === w.count)), JSON.stringify(charts));
  check('distributions: bands drawn', (await inked('.run-block .u-wrap canvas')) > 3000);
  await checkEmptyBlock(page, 'distributions', EXTRA_TAGS[0], { percentiles: [], step: [], values: [] });
}

// Images: the newest step with every sample, the step slider, brightness,
// contrast, actual size.
async function checkImages() {
  const imageTags = (await api('images/tags')).runs;
  await openTab('images');
  const [firstRun, firstTags] = Object.entries(imageTags)[0];
  const list = await api(`images/list?run=${encodeURIComponent(firstRun)}&tag=${encodeURIComponent(firstTags[0].tag)}`);
  const last = list.steps[list.steps.length - 1];
  const sel = `.card[data-tag="${firstTags[0].tag}"] .run-block[data-run="${firstRun}"]`;
  check('images: newest step shown with all its samples', await until(page, ([s, st, n]) => {
    const b = document.querySelector(s);
    return b && b.dataset.step === String(st) && b.dataset.samples === String(n);
  }, [sel, last.step, last.samples.length]));
  check('images: every image decoded', await until(page, () => [...document.querySelectorAll('.image-cell img')].every((i) => i.complete && i.naturalWidth > 0)));
  await shot('images');
  await page.$eval(`${sel} input[type=range]`, (el) => { el.value = '0'; el.dispatchEvent(new Event('input')); });
  check('images: slider picks an older step', await until(page, ([s, st]) => document.querySelector(s).dataset.step === String(st), [sel, list.steps[0].step]));
  await page.$eval('#brightness', (el) => { el.value = '1.5'; el.dispatchEvent(new Event('input')); });
  await page.$eval('#contrast', (el) => { el.value = '0.5'; el.dispatchEvent(new Event('input')); });
  check('images: brightness/contrast applied', await page.$eval('.image-cell img', (i) => i.style.filter) === 'brightness(1.5) contrast(0.5)');
  await page.check('#actual-size');
  // Waited for: the older step's image may still be loading (naturalWidth 0).
  check('images: actual size', await until(page, () => {
    const i = document.querySelector('.image-cell img');
    return i.complete && i.naturalWidth > 0 && !i.classList.contains('scaled') && i.getBoundingClientRect().width === i.naturalWidth;
  }));
  await shot('images-adjusted');
}

// Text: every entry, newest first, rendered as markdown (the showcase's
// notes: "# <run>", an emphasised word, inline code).
async function checkText() {
  await openTab('text');
  const textTags = (await api('text/tags')).runs;
  const [tRun, tTags] = Object.entries(textTags)[0];
  const rows = (await api(`text/series?run=${encodeURIComponent(tRun)}&tag=${encodeURIComponent(tTags[0].tag)}`)).rows;
  const sel = `.card[data-tag="${tTags[0].tag}"] .run-block[data-run="${tRun}"]`;
  await until(page, ([s, n]) => document.querySelector(s)?.dataset.entries === String(n), [sel, rows.length]);
  const shown = await page.$$eval(`${sel} .text-body`,
    (ps) => ps.map((p) => ({ text: p.textContent, children: p.children.length })));
  check('text: every entry shown', shown.length === rows.length, `${shown.length}`);
  const marks = await page.$$eval(`${sel} .text-body`, (ps) => ps.map((p) => ({
    h1: p.querySelector('h1')?.textContent, em: p.querySelector('em')?.textContent, code: p.querySelector('code')?.textContent })));
  check('text: shown as markdown', shown.length > 0 && marks.every((m, i) => {
    const src = rows[rows.length - 1 - i].text;
    return m.h1 === src.match(/^# (.*)$/m)?.[1] && m.em === src.match(/\*([^*]+)\*/)?.[1] && m.code === src.match(/`([^`]+)`/)?.[1] &&
      !shown[i].text.includes('# ') && !shown[i].text.includes('*');
  }), JSON.stringify(marks));
  await shot('text');
}

// A narrow window (1024 px, a laptop's half screen): the nine tabs do not
// fit one row. Each stays on screen, reachable by the mouse (they wrap to
// a second row; they used to run past the edge, where nothing showed
// them), and the sidebar and page start below the taller bar.
async function checkNarrowWindow() {
  await page.setViewportSize({ width: 1024, height: 800 });
  await until(page, () => {
    const bar = document.querySelector('.topbar').getBoundingClientRect();
    return bar.height > 48 && getComputedStyle(document.documentElement).getPropertyValue('--topbar-h') === `${bar.height}px`;
  });
  const boxes = await page.$$eval('a.tab', (as) => as.map((a) => {
    const r = a.getBoundingClientRect();
    return { tab: a.dataset.tab, left: r.left, right: r.right, top: r.top, bottom: r.bottom };
  }));
  const off = boxes.filter((b) => b.left < 0 || b.right > 1024 || b.bottom > 200);
  check('narrow: every tab on screen', boxes.length === 9 && off.length === 0, JSON.stringify(off));
  const bar = await page.$eval('.topbar', (e) => e.getBoundingClientRect().bottom);
  const side = await page.$eval('.sidebar', (e) => e.getBoundingClientRect().top);
  check('narrow: the sidebar starts below the top bar', side >= bar - 0.5, `${side} < ${bar}`);
  const last = boxes.at(-1);
  await page.mouse.click((last.left + last.right) / 2, (last.top + last.bottom) / 2);
  check(`narrow: the last tab (${last.tab}) opens by the mouse`, await tabLoaded(page, last.tab));
  await shot('narrow');
  await page.setViewportSize({ width: 1400, height: 900 });
}

async function main() {
  const runs = (await api('runs')).runs.map((r) => r.name);
  const scalarTags = (await api('scalars/tags')).runs;
  const tagNames = [...new Set(Object.values(scalarTags).flat().map((t) => t.tag))].sort();
  await checkShell(runs);
  await checkScalarCards(scalarTags, tagNames);
  await checkTooltip(runs);
  await checkSmoothing();
  await checkRunFilter(runs, tagNames);
  await checkScalarOptions(tagNames);
  await checkLive(runs);
  await checkDownloads(runs, scalarTags);
  await checkLongSeries();
  await checkHistograms();
  await checkDistributions();
  await checkImages();
  await checkText();
  await checkNarrowWindow();
  check('no console errors or failed requests', errors.length === 0, errors.join(' | '));
}

const started = Date.now();
await finishSuite('browser suite', main, { browser, server, work, started });
