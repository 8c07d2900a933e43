// hparams.test.mjs — the HParams page end to end, as a person comparing a
// sweep uses it: write_sweep writes 24 runs (6 hparams, 4 metrics; run_002
// killed by SIGKILL halfway, run_007 and run_018 failed), `glassbox serve`
// serves it, Debian's chromium (playwright-core) opens the dashboard with
// the real mouse and keyboard. Checks the table against /api/hparams
// (sorted by val_accuracy with a click, best first; filtered by typing a
// range; a column hidden from the sidebar), the killed run shown as not
// finished, a brush on the learning-rate axis of the parallel coordinates
// leaving exactly the runs with lr >= 1e-3 (in the table and the count),
// in a narrow window axes that keep room for their names and a card that
// scrolls sideways, the scatter-plot matrix drawn, the shared run selector (a row's box,
// "Select shown runs"), the metrics at a chosen step, a row's link to its
// Scalars, and two runs and a point written while the page is open
// showing without a reload (each wait is bounded at 15 s, never a
// verdict on speed: sanitizer builds on loaded machines are slow);
// grown to 86 runs, only a window of rows in the page, scrolled to the
// end with the mouse wheel. Screenshots:
// <build>/tests/artifacts/hparams_*.png.

import path from 'node:path';
import fs from 'node:fs';
import { apiJSON, ARTIFACTS, BUILD, check, finishSuite, launchBrowser, requireBrowser, run, startServer, tabLoaded, tempDir, until, watchedPage } from './lib.mjs';

requireBrowser('webui_hparams_browser');
const work = tempDir('gb-hparams-');
const db = path.join(work, 'sweep.db');
fs.mkdirSync(ARTIFACTS, { recursive: true });
const started = Date.now();
const sweep = path.join(BUILD, 'tests/write_sweep');
run(sweep, [db, '24', '6', '4'], 60000);

const server = await startServer(db);
const browser = await launchBrowser(path.join(work, 'profile'));
const { page, errors } = await watchedPage(browser);
const shot = (name, el) => (el ?? page).screenshot({ path: path.join(ARTIFACTS, `hparams_${name}.png`) });
const tableRuns = () => page.$$eval('.hp-table tbody tr[data-run]', (trs) => trs.map((t) => t.dataset.run));
const shownCount = () => page.$eval('.hp-page', (v) => +v.dataset.shown);

async function main() {
  const api = await apiJSON(server, 'hparams');
  const acc = api.metrics.findIndex((m) => m.tag === 'val_accuracy');
  check('api: 24 runs, the experiment as declared', api.runs.length === 24 && api.declared && acc === 0 &&
    api.hparams.map((p) => p.name).join() === 'lr,batch_size,optimizer,dropout,x4,x5', JSON.stringify(api.hparams.map((p) => p.name)));
  const statusOf = Object.fromEntries(api.runs.map((r) => [r.name, r.status]));
  check('api: run_002 was killed, run_007 failed, run_000 done',
    statusOf.run_002 === 'killed' && statusOf.run_007 === 'failed' && statusOf.run_000 === 'done', JSON.stringify(statusOf));
  const finalAcc = (r) => r.metrics[acc]?.[0];
  const byAcc = api.runs.filter((r) => typeof finalAcc(r) === 'number').sort((a, b) => finalAcc(b) - finalAcc(a)).map((r) => r.name);

  await page.goto(server.url);
  check('shell: ready', await until(page, () => window.__glassbox?.ready, null, 10000));
  await page.click('a[data-tab="hparams"]');
  check('hparams: page loads', await tabLoaded(page, 'hparams', 10000));
  check('table: a row per run', (await tableRuns()).length === 24);

  // ---- sorted by validation accuracy: one click, best first --------------------------------
  await page.click('.hp-table th[data-key="m:val_accuracy"]');
  await until(page, () => document.querySelector('.hp-table th[data-key="m:val_accuracy"]')?.textContent.includes('▼'));
  const sorted = await tableRuns();
  check('table: sorted by val_accuracy, best first', JSON.stringify(sorted.slice(0, byAcc.length)) === JSON.stringify(byAcc),
    `${sorted.slice(0, 5)} vs ${byAcc.slice(0, 5)}`);
  const bestCell = await page.$eval(`.hp-table tr[data-run="${byAcc[0]}"] td:nth-child(10)`, (td) => td.textContent);
  check('table: the best value is the API\'s', Math.abs(+bestCell - finalAcc(api.runs.find((r) => r.name === byAcc[0]))) < 1e-4, bestCell);
  await shot('table_sorted', page.locator('[data-section="table"]'));

  // ---- the killed run: not finished ---------------------------------------------------------
  const killed = await page.$eval('.hp-table tr[data-run="run_002"] .hp-status', (td) => td.textContent);
  check('table: the SIGKILLed run reads "killed — not finished"', killed === 'killed — not finished', killed);
  const failed = await page.$eval('.hp-table tr[data-run="run_007"] .hp-status', (td) => td.textContent);
  check('table: a failed run reads failed', failed === 'failed', failed);
  await page.locator('.hp-table tr[data-run="run_002"]').scrollIntoViewIfNeeded();
  await shot('killed_run', page.locator('[data-section="table"]'));

  // ---- a brush on the learning-rate axis: only lr >= 1e-3 ------------------------------------
  const box = await page.locator('canvas[data-view="parcoords"]').boundingBox();
  const geom = await page.evaluate(() => {
    const m = window.__glassbox.hparams.model;
    const c = m.column('h:lr');
    return { p3: m.position(c, 1e-3), p4: m.position(c, 3e-4), log: c.log };
  });
  check('parcoords: the learning rate axis is log', geom.log === true);
  const axisX = box.x + 56, yOf = (p) => box.y + 46 + (1 - p) * (340 - 46 - 26);
  const yTop = yOf(1) - 4, yBottom = yOf((geom.p3 + geom.p4) / 2);   // between 3e-4 and 1e-3
  await page.mouse.move(axisX, yTop);
  await page.mouse.down();
  await page.mouse.move(axisX, (yTop + yBottom) / 2, { steps: 4 });
  await page.mouse.move(axisX, yBottom, { steps: 4 });
  await page.mouse.up();
  const wantLr = api.runs.filter((r) => r.hparams.lr >= 1e-3).map((r) => r.name).sort();
  const brushed = (await tableRuns()).sort();
  check('brush: the table keeps exactly the runs with lr >= 1e-3', JSON.stringify(brushed) === JSON.stringify(wantLr),
    `${brushed.length} rows: ${brushed} vs ${wantLr}`);
  check('brush: the count says so', await shownCount() === wantLr.length);
  const summaryText = await page.textContent('.hp-summary');
  check('brush: the summary reads it', summaryText === `${wantLr.length} of 24 runs shown`, summaryText);
  await page.locator('[data-section="parcoords"]').scrollIntoViewIfNeeded();
  await shot('brush_lr', page.locator('[data-section="parcoords"]'));

  // Hover: the mouse on a run's line halfway between the x4 and x5 axes names it.
  const target = wantLr[0];
  const mid = await page.evaluate((run) => {
    const { model, parcoords } = window.__glassbox.hparams;
    const r = model.runs.find((x) => x.name === run);
    const axes = parcoords.layout, i = axes.findIndex((a) => a.c.key === 'h:x4');
    const y = (a) => parcoords.y(model.position(a.c, r.values.get(a.c.key)));
    return { x: (axes[i].x + axes[i + 1].x) / 2, y: (y(axes[i]) + y(axes[i + 1])) / 2 };
  }, target);
  const pc = await page.locator('canvas[data-view="parcoords"]').boundingBox();
  await page.mouse.move(pc.x + mid.x, pc.y + mid.y + 20);
  await page.mouse.move(pc.x + mid.x, pc.y + mid.y, { steps: 4 });
  const hovered = await until(page, () => document.querySelector('.hp-parcoords')?.dataset.hover || null, null, 15000);
  const tipText = await page.textContent('.hp-parcoords .hp-tip');
  check('parcoords: the line under the mouse is named with its values', hovered === target && tipText.startsWith(target) &&
    tipText.includes('learning rate'), `${hovered} ${tipText}`);
  await shot('parcoords_hover', page.locator('[data-section="parcoords"]'));
  await page.mouse.move(pc.x + 5, pc.y - 40);

  // ---- a narrow window: each axis keeps room for its name, the card scrolls sideways ----------
  // (The ten axes used to share the card's 580 px, their names drawn over each other.)
  await page.setViewportSize({ width: 900, height: 900 });
  const crowded = () => page.evaluate(() => {
    const { parcoords } = window.__glassbox.hparams;
    const g = document.createElement('canvas').getContext('2d');
    g.font = '600 11px system-ui, sans-serif';
    const width = (a) => g.measureText(a.c.label.length > 18 ? `${a.c.label.slice(0, 17)}…` : a.c.label).width;
    const axes = parcoords.layout;
    return axes.slice(1).map((a, i) => [axes[i], a]).filter(([a, b]) => b.x - a.x < (width(a) + width(b)) / 2 + 4)
      .map(([a, b]) => `${a.c.label}|${b.c.label}`);
  });
  await until(page, () => document.querySelector('.hp-parcoords').clientWidth < 700);
  const overlaps = await crowded();
  check('parcoords narrow: no two axis names overlap', overlaps.length === 0, overlaps.join(', '));
  const pcNarrow = await page.locator('.hp-parcoords').boundingBox();
  await page.mouse.move(pcNarrow.x + pcNarrow.width / 2, pcNarrow.y + pcNarrow.height / 2);
  await page.mouse.wheel(2000, 0);
  const scrolled = await until(page, () => {
    const el = document.querySelector('.hp-parcoords'), axes = window.__glassbox.hparams.parcoords.layout;
    return el.scrollLeft > 0 && axes.at(-1).x - el.scrollLeft <= el.clientWidth ? el.scrollLeft : null;
  });
  check('parcoords narrow: the wheel scrolls the card to its last axis', scrolled !== null);
  await shot('parcoords_narrow', page.locator('[data-section="parcoords"]'));
  await page.setViewportSize({ width: 1400, height: 900 });

  // ---- the scatter-plot matrix ----------------------------------------------------------------
  const sm = await page.locator('canvas[data-view="scatter"]').boundingBox();
  check('scatter: a cell per hparam and metric', sm.width > 4 * 150 && sm.height > 6 * 100, JSON.stringify(sm));
  const inked = await page.evaluate(() => {
    const cv = document.querySelector('canvas[data-view="scatter"]');
    const d = cv.getContext('2d').getImageData(0, 0, cv.width, cv.height).data;
    let coloured = 0;
    for (let i = 0; i < d.length; i += 4) if (d[i + 3] > 0 && Math.abs(d[i] - d[i + 1]) + Math.abs(d[i + 1] - d[i + 2]) > 60) coloured++;
    return coloured;
  });
  check('scatter: coloured dots drawn', inked > 500, String(inked));
  await page.locator('[data-section="scatter"]').scrollIntoViewIfNeeded();
  await shot('scatter', page.locator('[data-section="scatter"]'));

  // ---- shared selection ---------------------------------------------------------------------
  await page.click('#hp-select-shown');
  const checkedRuns = await page.$$eval('#run-list label.run', (ls) => ls.filter((l) => l.querySelector('input').checked).map((l) => l.dataset.run).sort());
  check('selection: "Select shown runs" checks exactly them in the run selector', JSON.stringify(checkedRuns) === JSON.stringify(wantLr), checkedRuns.join());
  await page.click(`.hp-table tr[data-run="${wantLr[0]}"] td.hp-sel input`);
  const still = await page.$eval(`#run-list label.run[data-run="${wantLr[0]}"] input`, (i) => i.checked);
  check('selection: a row\'s box is the run\'s box on every page', still === false);

  // ---- clear, then a typed range filter and a hidden column --------------------------------
  await page.click('#hp-clear');
  check('clear: every run again', (await tableRuns()).length === 24);
  await page.click('.hp-table input.hp-filter[data-key="m:val_accuracy"]');
  await page.keyboard.type('>=0.8');
  const wantHigh = api.runs.filter((r) => finalAcc(r) >= 0.8).map((r) => r.name).sort();
  check('filter: ">=0.8" under val_accuracy keeps exactly those runs',
    JSON.stringify((await tableRuns()).sort()) === JSON.stringify(wantHigh), `${(await tableRuns()).length} vs ${wantHigh.length}`);
  await page.click('#hp-clear');
  await page.click('.hp-columns input[data-key="h:x4"]');
  const heads = await page.$$eval('.hp-table thead tr:first-child th', (ths) => ths.map((t) => t.dataset.key));
  check('columns: x4 hidden from the table', !heads.includes('h:x4') && heads.includes('h:x5'), heads.join());

  // ---- "at step": each metric's value at a chosen step, from the server ----------------------
  await page.click('#hp-clear');
  await page.click('input[data-mode="step"]');
  await page.fill('#hp-step', '1');
  await page.press('#hp-step', 'Enter');
  const atStep = await apiJSON(server, 'hparams', { step: 1 });
  const want1 = Object.fromEntries(atStep.runs.map((r) => [r.name, r.metrics[acc]?.[5]]));
  const gotAt = await until(page, (w) => {
    const cells = [...document.querySelectorAll('.hp-table tbody tr[data-run]')];
    const ok = cells.length > 0 && cells.every((tr) => {
      const td = tr.querySelector('td:nth-child(9)');   // val_accuracy, with x4 hidden
      return td && Math.abs(+td.textContent - w[tr.dataset.run]) < 1e-4;
    });
    return ok ? cells.length : null;
  }, want1, 15000);
  check('at step: val_accuracy at step 1 is the API\'s for every row', gotAt === 24, String(gotAt));
  await page.click('input[data-mode="final"]');

  // ---- live: two runs written while the page is open --------------------------------------------
  run(sweep, [db, '2', '6', '4', '24'], 30000);
  check('live: the new runs appear without a reload', await until(page, () => document.querySelectorAll('.hp-table tbody tr[data-run]').length === 26, null, 15000));
  // A running run's new point moves its row and its line.
  run(path.join(BUILD, 'tests/append_scalar'), [db, 'run_005', 'val_accuracy', '10', '0.987'], 30000);
  check('live: a new point of a run shows in its row', await until(page,
    () => document.querySelector('.hp-table tr[data-run="run_005"] td:nth-child(9)')?.textContent === '0.987', null, 15000));
  const moved = await page.evaluate(() => window.__glassbox.hparams.model.runs.find((r) => r.name === 'run_005').values.get('m:val_accuracy'));
  check('live: and the charts draw the new value', moved === 0.987, String(moved));

  // ---- 86 runs: only a window of rows is in the page, and scrolling moves it --------------------
  run(sweep, [db, '60', '6', '4', '26'], 60000);
  check('window: 86 runs arrive', await until(page, () => window.__glassbox.hparams.table.shown.length === 86, null, 5000));
  const all86 = await apiJSON(server, 'hparams');
  const order86 = all86.runs.filter((r) => typeof finalAcc(r) === 'number').sort((a, b) => finalAcc(b) - finalAcc(a)).map((r) => r.name);
  const inPage = await tableRuns();
  check('window: fewer rows in the page than runs, the best first', inPage.length < 86 &&
    JSON.stringify(inPage) === JSON.stringify(order86.slice(0, inPage.length)), `${inPage.length} rows`);
  const wrap = await page.locator('.hp-table-wrap').boundingBox();
  await page.mouse.move(wrap.x + wrap.width / 2, wrap.y + wrap.height / 2);
  for (let k = 0; k < 8; k++) await page.mouse.wheel(0, 800);
  const atEnd = await until(page, (last) => {
    const rows = [...document.querySelectorAll('.hp-table tbody tr[data-run]')];
    return rows.length && rows[rows.length - 1].dataset.run === last ? rows.map((r) => r.dataset.run) : null;
  }, order86[85], 15000);
  const from = atEnd ? order86.indexOf(atEnd[0]) : -1;
  check('window: scrolled to the end, the rows are the last of the order, in order',
    atEnd && JSON.stringify(atEnd) === JSON.stringify(order86.slice(from)), String(atEnd?.length));
  const lastBox = await page.locator(`.hp-table tr[data-run="${order86[85]}"]`).boundingBox();
  check('window: and the last row is in sight', lastBox && lastBox.y + lastBox.height <= wrap.y + wrap.height + 1, JSON.stringify(lastBox));

  // ---- a run's link opens its Scalars ----------------------------------------------------------------
  await page.click('.hp-table input.hp-filter[data-key="m:val_accuracy"]');
  await page.keyboard.type('>=0.98');   // run_005 alone, since its new point
  check('filter: the run with the new point alone', await until(page,
    () => [...document.querySelectorAll('.hp-table tbody tr[data-run]')].map((r) => r.dataset.run).join() === 'run_005'));
  await page.click('.hp-table tr[data-run="run_005"] td.hp-run a');
  check('link: the Scalars page opens', await tabLoaded(page, 'scalars', 10000));
  const sel = await page.evaluate(() => window.__glassbox.ctx.runs.selected());
  check('link: with that run selected', JSON.stringify(sel) === '["run_005"]', JSON.stringify(sel));
  check('console: no errors', errors.length === 0, errors.join('\n'));
}

await finishSuite('hparams browser test', main, { browser, server, work, started });
