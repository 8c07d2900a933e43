// numerics.test.mjs — the Numerics page end to end, as a person hunting a
// NaN uses it: examples/nan_hunt --check-numerics=record writes a store
// (its hand-written cross-entropy hits log(0)), `glassbox serve` serves it,
// Debian's chromium (playwright-core) opens the dashboard. Checks that the
// first NaN/Inf is the card at the top naming naive_cross_entropy/Log with
// its input's min 0, that the table lists the alerts in the API's
// first-occurrence order and opens a row's details, that the op type and
// step filters and "show more" work, that an alert written while the page
// is open appears in its place within 2 s, that the scalars page links a
// run's alerts and its NaN markers to the page, and that the console stays
// clean. Screenshots: <build>/tests/artifacts/numerics*.png.

import fs from 'node:fs';
import path from 'node:path';
import { apiJSON, ARTIFACTS, BUILD, check, finishSuite, launchBrowser, requireBrowser, run, startServer, tabLoaded, tempDir, until, watchedPage } from './lib.mjs';

const RUN = 'nan_hunt';
requireBrowser('webui_numerics_browser');
const work = tempDir('gb-numerics-');
const db = path.join(work, 'nan_hunt.db');
fs.mkdirSync(ARTIFACTS, { recursive: true });
const started = Date.now();
// 100 steps: the loss turns NaN near step 56 and the engine's default cap
// of 1000 recorded alerts is reached well before the end.
run(path.join(BUILD, 'examples/nan_hunt'), ['--check-numerics=record', '--steps', '100', '--db', db, '--run', RUN], 150000);

const server = await startServer(db);
const browser = await launchBrowser(path.join(work, 'profile'));
const { page, errors } = await watchedPage(browser);

const api = (p, params) => apiJSON(server, p, params);
const shot = (name) => page.screenshot({ path: path.join(ARTIFACTS, `${name}.png`) });
const rows = () => page.$$eval('tr.alert-row', (trs) => trs.map((t) => ({
  id: +t.dataset.id, step: t.dataset.step === '' ? null : +t.dataset.step, op: t.dataset.opName,
  type: t.children[2].textContent })));
const loaded = () => until(page, () => document.querySelector('.numerics-page')?.dataset.loaded === 'true', null, 10000);
const pageState = () => page.$eval('.numerics-page', (v) => ({ ...v.dataset }));

async function openTab(name) {
  await page.click(`a[data-tab="${name}"]`);
  return tabLoaded(page, name, 10000);
}

async function main() {
  const info = (await api('numerics/runs')).runs.find((r) => r.run === RUN);
  check('api: the run has alerts', info?.count > 100, JSON.stringify(info));
  const all = await api('numerics/alerts', { run: RUN, limit: 200 });
  const first = all.first;
  check('api: first alert is log(0) in the cross-entropy', first?.op_name === 'naive_cross_entropy/Log' &&
    first.op_type === 'Log' && first.origin === 'created' && first.neginf > 0 && first.direction === 'forward', JSON.stringify(first));
  check('api: its input reaches 0', first?.inputs?.[0]?.min === 0, JSON.stringify(first?.inputs));

  // ---- the page --------------------------------------------------------------
  await page.goto(server.url);
  check('shell: ready', await until(page, () => window.__glassbox?.ready && document.querySelector('.page')?.dataset.loaded === 'true', null, 10000));
  const tabs = await page.$$eval('a.tab', (as) => as.map((a) => a.dataset.tab));
  check('shell: a Numerics tab', tabs.includes('numerics'), tabs.join());
  check('numerics: page loads', await openTab('numerics'));
  check('numerics: alerts shown', await loaded() && (await pageState()).total === String(all.total));

  // The first NaN/Inf: a card at the top, in view, in large type.
  const want = `First NaN/Inf: -Inf created by Log (naive_cross_entropy/Log) at step ${first.step}`;
  const title = await page.$eval('.numerics-first .first-title', (e) => e.textContent);
  check('first card: names the op that made the first NaN/Inf', title === want, title);
  check('first card: carries its op name', await page.$eval('.numerics-first', (e) => e.dataset.opName) === 'naive_cross_entropy/Log');
  const layout = await page.evaluate(() => {
    const card = document.querySelector('.numerics-first').getBoundingClientRect();
    const table = document.querySelector('table.alerts').getBoundingClientRect();
    const size = parseFloat(getComputedStyle(document.querySelector('.first-title')).fontSize);
    const row = parseFloat(getComputedStyle(document.querySelector('table.alerts td')).fontSize);
    return { cardTop: card.top, cardBottom: card.bottom, tableTop: table.top, size, row, height: innerHeight };
  });
  check('first card: above the table, fully on screen, larger type', layout.cardBottom <= layout.tableTop &&
    layout.cardTop >= 48 && layout.cardBottom < layout.height && layout.size >= 1.4 * layout.row, JSON.stringify(layout));
  const inputRow = await page.$$eval('.numerics-first table.inputs tbody tr td', (tds) => tds.map((t) => t.textContent));
  check('first card: inputs table shows min 0', inputRow[1] === 'float32' && inputRow[3] === '0', inputRow.join('|'));
  check('first card: says the op created it and why', /Every input was finite/.test(await page.$eval('.numerics-first', (e) => e.textContent)) &&
    /log\(0\) = -Inf/.test(await page.$eval('.numerics-first .first-hint', (e) => e.textContent)));

  // The table: the API's order, the first alert first and marked.
  let shown = await rows();
  check('table: 200 rows at first', shown.length === Math.min(200, all.total), `${shown.length}`);
  check('table: in the API\'s first-occurrence order', JSON.stringify(shown.map((r) => r.id)) === JSON.stringify(all.alerts.map((a) => a.id)));
  check('table: steps never go back', shown.every((r, i) => i === 0 || r.step >= shown[i - 1].step));
  check('table: first row is the first alert, marked', shown[0]?.op === 'naive_cross_entropy/Log' &&
    await page.$eval('tr.alert-row', (t) => t.classList.contains('first')));
  await shot('numerics');

  // A row opens to show its details, and closes again.
  await page.click('tr.alert-row:nth-child(2)');
  const detail = await until(page, () => document.querySelector('tr.alert-detail')?.textContent);
  check('table: a row opens its details', !!detail && /already held NaN\/Inf/.test(detail) && /input 0/.test(detail), detail);
  check('table: details list the inputs', (await page.$$('tr.alert-detail table.inputs tbody tr')).length === all.alerts[1].inputs.length);
  await shot('numerics-expanded');
  await page.click('tr.alert-row:nth-child(2)');
  check('table: the row closes', await until(page, () => !document.querySelector('tr.alert-detail')));

  // Filters: op type, steps; chips clear them.
  const logCount = all.op_types.find((t) => t.op_type === 'Log').count;
  await page.selectOption('#numerics-op-type', 'Log');
  check('filter op type: only Log alerts', await until(page, (n) => document.querySelector('.numerics-page').dataset.matched === String(n), logCount) &&
    (await rows()).every((r) => r.type === 'Log') && (await rows()).length === Math.min(200, logCount));
  check('filter op type: in the URL', new URL(page.url()).searchParams.get('op_type') === 'Log');
  check('filter op type: the first card stays', await page.$eval('.numerics-first', (e) => e.dataset.opName) === 'naive_cross_entropy/Log');
  await page.click('.chip-x');
  check('filter op type: chip clears it', await until(page, (n) => document.querySelector('.numerics-page').dataset.matched === String(n), all.total));
  const step = first.step + 4;
  await page.fill('#numerics-minStep', String(step));
  await page.fill('#numerics-maxStep', String(step));
  const atStep = (await api('numerics/alerts', { run: RUN, min_step: step, max_step: step })).matched;
  check(`filter steps: only step ${step}`, await until(page, (n) => document.querySelector('.numerics-page').dataset.matched === String(n), atStep) &&
    (await rows()).every((r) => r.step === step) && atStep > 0, `${atStep}`);
  await page.click('.chip-x');
  check('filter steps: chip clears it', await until(page, (n) => document.querySelector('.numerics-page').dataset.matched === String(n), all.total));

  // Show more.
  await page.click('#numerics-more');
  check('show more: 200 more rows', await until(page, (n) => document.querySelectorAll('tr.alert-row').length === n, Math.min(400, all.total)));

  // Live: an alert written now appears in its place without a reload (the
  // 10 s bound only keeps a broken page from hanging the suite).
  run(path.join(BUILD, 'tests/append_alert'), [db, RUN, String(first.step + 1), 'Exp', 'live/Exp']);
  const live = await until(page, () => !!document.querySelector('tr.alert-row[data-op-name="live/Exp"]'), null, 10000);
  check('live: a new alert shows without a reload', !!live);
  shown = await rows();
  const at = shown.findIndex((r) => r.op === 'live/Exp');
  check('live: merged in first-occurrence order', at > 0 && shown[at - 1].step <= first.step + 1 && shown[at + 1].step > first.step + 1 &&
    shown.every((r, i) => i === 0 || r.step >= shown[i - 1].step), JSON.stringify(shown.slice(at - 1, at + 2)));
  check('live: totals updated', (await pageState()).total === String(all.total + 1));

  // ---- from the scalars page ----------------------------------------------------
  check('scalars: page loads', await openTab('scalars'));
  // The tab switch rewrites the URL after the page shows: wait for it (bounded).
  const queryGone = await page.waitForFunction(() => location.search === '', null, { timeout: 2000 })
    .then(() => true, () => false);
  check('scalars: the filter query is gone', queryGone, page.url());
  const lossCard = '.card[data-tag="train/loss"]';
  check('scalars: loss card drawn with NaN markers', await until(page, (s) => +document.querySelector(s)?.dataset.markers > 0, lossCard, 10000));
  const link = await until(page, (s) => document.querySelector(`${s} a.numerics-link`)?.textContent, lossCard);
  check('scalars: the run links its numerics alerts', link === `⚠ ${(all.total + 1).toLocaleString('en-US')} numerics alerts`, link);
  await page.$eval(lossCard, (c) => c.scrollIntoView({ block: 'center' }));
  await shot('numerics-scalars');

  // A click on the first NaN marker opens the page at its step. Markers are
  // found where the user sees them: the red outline pixels on the canvas.
  const loss = await api('scalars/series', { run: RUN, tag: 'train/loss' });
  const nanStep = loss.step[loss.nan.findIndex((n) => n > 0)];
  const marker = await page.$eval(`${lossCard} .u-wrap canvas`, (c) => {
    const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
    let minX = Infinity;
    const pts = [];
    for (let y = 0; y < c.height; y++) for (let x = 0; x < c.width; x++) {
      const i = 4 * (y * c.width + x);
      if (d[i] > 150 && d[i + 1] < 70 && d[i + 2] < 70 && d[i + 3] > 200) { pts.push([x, y]); minX = Math.min(minX, x); }
    }
    const near = pts.filter(([x]) => x <= minX + 10);
    if (!near.length) return null;
    const r = c.getBoundingClientRect(), k = r.width / c.width;
    return { x: r.left + k * near.reduce((a, p) => a + p[0], 0) / near.length, y: r.top + k * near.reduce((a, p) => a + p[1], 0) / near.length };
  });
  check('scalars: NaN markers drawn on the loss curve', !!marker);
  if (marker) {
    await page.mouse.move(marker.x, marker.y);
    check('scalars: the pointer shows a marker is a link', await until(page, (s) => document.querySelector(`${s} .u-over`).classList.contains('over-link'), lossCard));
    await page.mouse.click(marker.x, marker.y);
    check('marker click: opens the Numerics page', await until(page, () => location.hash === '#numerics' && document.querySelector('.numerics-page')?.dataset.loaded === 'true', null, 10000));
    check(`marker click: filtered to run and step ${nanStep}`, new URL(page.url()).searchParams.get('step') === String(nanStep) &&
      await until(page, () => document.querySelectorAll('tr.alert-row').length > 0) &&
      (await rows()).every((r) => r.step === nanStep) && await page.$eval('.chip', (c, n) => c.textContent.startsWith(`step ${n}`), nanStep));
    check('marker click: the first card is there', await page.$eval('.numerics-first', (e) => e.dataset.opName) === 'naive_cross_entropy/Log');
    await shot('numerics-from-marker');
    check('back to scalars', await openTab('scalars'));
  }

  // The legend link opens the whole run.
  await until(page, (s) => !!document.querySelector(`${s} a.numerics-link`), lossCard);
  await page.click(`${lossCard} a.numerics-link`);
  check('legend link: opens the run\'s alerts, unfiltered', await until(page, (n) => location.hash === '#numerics' &&
    document.querySelector('.numerics-page')?.dataset.matched === String(n) && !document.querySelector('.chip'), all.total + 1, 10000));

  // The run selector: no selected run with alerts, then all again.
  await page.click('#runs-none');
  check('run selector: none -> no alerts, said so', await until(page, () => document.querySelector('.numerics-page').dataset.alerts === '0' &&
    /None of the selected runs/.test(document.querySelector('.numerics-page').textContent)));
  await page.click('#runs-all');
  check('run selector: all -> the run again', await until(page, (n) => document.querySelector('.numerics-page').dataset.matched === String(n) &&
    document.querySelectorAll('tr.alert-row').length > 0, all.total + 1));

  check('no console errors or failed requests', errors.length === 0, errors.join(' | '));
}

await finishSuite('numerics browser suite', main, { browser, server, work, started });
