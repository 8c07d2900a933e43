// first_run.test.mjs — a newcomer's first run, as the README tells it:
// `glassbox serve --db new.db` on a store that does not exist yet, then one
// epoch of examples/fashion_mnist_fit into it while the page is open, then
// nan_hunt's NaNs recorded beside it, and every dashboard right on that
// one-epoch store, driven with the real mouse in Debian's chromium:
//   - the run appears on the open page (measured from the store's first
//     commit; the figure is printed, not asserted);
//   - no "<run>/rank_0" run for a single process;
//   - Scalars before scrolling: cards below the fold say "Loading…" and draw
//     no axes; a one-point chart (an epoch metric) spans a step either side;
//     the tooltip stays clear of the plot below the cursor;
//   - Histograms: cards in a grid, each as tall as one curve, "1 step (0)";
//   - Distributions: the one step drawn (coloured pixels, not only grid
//     lines) and said;
//   - Text: the run's markdown rendered (heading, table, emphasis), and
//     hostile markdown (a script, an onerror image, a javascript: link)
//     shown as text, never run — clicking the link runs nothing;
//   - Numerics: the stored alerts are capped, and the page says how many
//     more there were and the last NaN's step — nan_hunt's own figures.
// Screenshots: <build>/tests/artifacts/first_run_*.png.

import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { ARTIFACTS, BUILD, apiJSON, check, finishSuite, launchBrowser, requireBrowser, run, startServer, tabLoaded, tempDir, until, watchedPage } from './lib.mjs';

requireBrowser('webui_first_run');
const work = tempDir('gb-first-run-');
const db = path.join(work, 'new.db');
fs.mkdirSync(ARTIFACTS, { recursive: true });
const started = Date.now();

const server = await startServer(db);   // the store does not exist yet
const browser = await launchBrowser(path.join(work, 'profile'));
const { page, errors } = await watchedPage(browser);
const shot = (name) => page.screenshot({ path: path.join(ARTIFACTS, `first_run_${name}.png`) });
const api = (p, params) => apiJSON(server, p, params);

async function openTab(name) {
  await page.click(`a[data-tab="${name}"]`);
  return tabLoaded(page, name, 15000);
}

// Trains one epoch into the store; resolves with its output when done.
function train() {
  return new Promise((resolve) => {
    const child = spawn(path.join(BUILD, 'examples/fashion_mnist_fit'),
      ['--model', 'cnn', '--epochs', '1', '--limit', '3000', '--db', db], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (d) => { out += d; });
    child.stderr.on('data', (d) => { out += d; });
    child.on('exit', (code) => resolve({ code, out }));
  });
}

// Polls the server's run list until run is there; the time it was first seen.
async function storeHas(run, timeoutMs) {
  const end = Date.now() + timeoutMs;
  while (Date.now() < end) {
    const runs = (await api('runs').catch(() => ({ runs: [] }))).runs || [];
    if (runs.some((r) => r.name === run || r.run === run)) return Date.now();
    await new Promise((r) => setTimeout(r, 20));
  }
  return null;
}

async function firstRun() {
  await page.goto(server.url);
  check('empty store: the page is ready', await until(page, () => window.__glassbox?.ready, null, 15000));
  await shot('empty');
  const training = train();
  const inStore = await storeHas('cnn', 120000);
  check('the run reaches the store', inStore !== null);
  const onPage = await until(page, () => !!document.querySelector('#run-list .run[data-run="cnn"]'), null, 60000);
  const shownAt = Date.now();
  check('the open page shows the run as it appears', !!onPage);
  if (inStore && onPage) console.log(`measured: the run was on the page ${shownAt - inStore} ms after the store first listed it`);
  const done = await training;
  check('one epoch of fit trains', done.code === 0, done.out.slice(-2000));
  check('fit prints nothing into its progress bar', !/[0-9]epoch \d+\/\d+: /.test(done.out), done.out.slice(-600));
}

async function scalars() {
  // A laptop-sized window: the charts of a one-epoch fit do not all fit.
  // Opened afresh, as a person coming back to it would.
  await page.setViewportSize({ width: 1400, height: 600 });
  await page.goto(`${server.url}#scalars`);
  await page.reload();
  check('scalars: tab loads', await tabLoaded(page, 'scalars', 15000));
  await until(page, () => document.querySelectorAll('.card[data-tag][data-state="ready"]').length > 0, null, 15000);
  await page.evaluate(() => window.scrollTo(0, 0));
  await shot('scalars_top');
  // textContent, not innerText: cards far from the screen are not laid out
  // (content-visibility), and innerText of a skipped card is empty.
  const below = await page.$$eval('.card[data-tag]', (cs) => cs.filter((c) => c.getBoundingClientRect().top > window.innerHeight + 450)
    .map((c) => ({ tag: c.dataset.tag, state: c.dataset.state, text: c.textContent, axes: !!c.querySelector('.u-wrap') })));
  check('scalars: some cards start well below the fold', below.length > 0, JSON.stringify(below.map((b) => b.tag)));
  check('scalars: below the fold, "Loading…" and no empty axes', below.length > 0 &&
    below.every((b) => b.state === 'loading' && b.text.includes('Loading…') && !b.axes), JSON.stringify(below));
  // The whole page as it stands (taking it may bring the rest into view).
  await page.screenshot({ path: path.join(ARTIFACTS, 'first_run_scalars_page.png'), fullPage: true });
  const runs = await page.$$eval('#run-list .run', (l) => l.map((x) => x.dataset.run));
  check('no rank_0 run for a single process', !runs.some((r) => /rank_/.test(r)) && runs.includes('cnn'), runs.join());

  // An epoch metric after one epoch: one point, at step 0.
  const card = '.card[data-tag="epoch/val_accuracy"]';
  await page.$eval(card, (c) => c.scrollIntoView({ block: 'center' }));
  const range = await until(page, (s) => document.querySelector(s)?.dataset.xRange, card, 10000);
  check('scalars: one point spans a step either side', range === '-1,1', range);
  await shot('scalars_one_point');

  // The tooltip of a many-point chart, hovered low in its plot.
  const loss = '.card[data-tag="batch/loss"]';
  await page.$eval(loss, (c) => c.scrollIntoView({ block: 'center' }));
  await until(page, (s) => document.querySelector(s)?.dataset.state === 'ready', loss, 10000);
  const over = await page.$(`${loss} .u-over`);
  const box = await over.boundingBox();
  const at = { x: box.x + box.width * 0.5, y: box.y + box.height * 0.8 };
  await page.mouse.move(at.x - 30, at.y);
  await page.mouse.move(at.x, at.y, { steps: 5 });
  const tip = await until(page, (s) => { const t = document.querySelector(`${s} .tooltip`); if (!t || t.hidden) return null; const r = t.getBoundingClientRect(); return { left: r.left, right: r.right, top: r.top, bottom: r.bottom }; }, loss, 5000);
  await shot('scalars_tooltip');
  check('scalars: the tooltip shows', !!tip);
  if (tip) {
    // The plot under and below the cursor stays in sight: the tooltip
    // stands above the cursor (beside it when the card has room).
    check('scalars: the tooltip leaves the plot below the cursor clear', tip.bottom < at.y, JSON.stringify({ tip, at, box }));
  }
}

async function histograms() {
  await page.setViewportSize({ width: 1400, height: 900 });
  check('histograms: tab loads', await openTab('histograms'));
  await until(page, () => [...document.querySelectorAll('.run-block')].slice(0, 2).every((b) => b.dataset.state === 'ready'), null, 15000);
  await shot('histograms');
  const cards = await page.$$eval('.card[data-tag]', (cs) => cs.slice(0, 4).map((c) => {
    const r = c.getBoundingClientRect();
    return { top: Math.round(r.top), left: Math.round(r.left), height: Math.round(r.height), width: Math.round(r.width), text: c.innerText };
  }));
  check('histograms: cards share a row (a grid)', cards.length >= 2 && cards[0].top === cards[1].top && cards[1].left > cards[0].left, JSON.stringify(cards));
  check('histograms: a one-step card is sized to one curve', cards.every((c) => c.height < 220), JSON.stringify(cards.map((c) => c.height)));
  check('histograms: "1 step (0)", never "1 steps"', cards[0]?.text.includes('1 step (0)') && !cards.some((c) => c.text.includes('1 steps')), cards[0]?.text);
}

async function distributions() {
  check('distributions: tab loads', await openTab('distributions'));
  await until(page, () => document.querySelector('.run-block')?.dataset.state === 'ready', null, 15000);
  await shot('distributions');
  const first = await page.$eval('.run-block', (b) => {
    const canvas = b.querySelector('canvas');
    const c = canvas.getContext('2d');
    const d = c.getImageData(0, 0, canvas.width, canvas.height).data;
    let coloured = 0;   // pixels of the run's colour, not grey grid lines
    for (let i = 0; i < d.length; i += 4) {
      const [r, g, bl, a] = [d[i], d[i + 1], d[i + 2], d[i + 3]];
      if (a > 20 && Math.max(r, g, bl) - Math.min(r, g, bl) > 30) coloured++;
    }
    return { steps: b.dataset.steps, text: b.innerText, coloured };
  });
  check('distributions: a one-step histogram is drawn', first.steps === '1' && first.coloured > 500, JSON.stringify(first));
  check('distributions: it says it has one step', first.text.includes('1 step (0)'), first.text);
}

async function text() {
  // Hostile markdown next to the run's own: written while the page is open.
  const hostile = '## hostile\n\n<script>window.__pwned = "script"</script>\n\n<img src=x onerror="window.__pwned = \'img\'">\n\n' +
    '[click me](javascript:window.__pwned=\'link\') and [fine](https://example.com)';
  run(path.join(BUILD, 'tests/append_text'), [db, 'cnn', 'run/hostile', '1', hostile]);
  check('text: tab loads', await openTab('text'));
  const about = '.card[data-tag="run/about"] .text-body';
  const rendered = await until(page, (s) => {
    const b = document.querySelector(s);
    return b && b.querySelector('h1') ? { h1: b.querySelector('h1').textContent, em: b.querySelectorAll('em').length, cells: b.querySelectorAll('td').length, raw: b.textContent.includes('# ') } : null;
  }, about, 15000);
  check('text: markdown rendered (heading, table, emphasis)', rendered?.h1 === 'cnn, Adam' && rendered.em >= 3 && rendered.cells >= 8 && !rendered.raw, JSON.stringify(rendered));
  const bad = '.card[data-tag="run/hostile"] .text-body';
  const safe = await until(page, (s) => {
    const b = document.querySelector(s);
    if (!b) return null;
    const links = [...b.querySelectorAll('a')].map((a) => a.getAttribute('href'));
    return { scripts: document.querySelectorAll('.page script').length, imgs: b.querySelectorAll('img').length,
      handlers: [...b.querySelectorAll('*')].some((e) => [...e.attributes].some((a) => a.name.startsWith('on'))),
      links, shown: b.textContent.includes('<script>'), pwned: window.__pwned ?? null };
  }, bad, 15000);
  check('text: hostile markdown is shown as text, nothing of it runs', safe && safe.scripts === 0 && safe.imgs === 0 && !safe.handlers &&
    safe.shown && !safe.links.some((l) => l && /^\s*javascript:/i.test(l)) && safe.links.includes('https://example.com') && safe.pwned === null, JSON.stringify(safe));
  await page.locator(bad).getByText('click me').click();
  await page.waitForTimeout(300);
  check('text: clicking the javascript: "link" runs nothing', await page.evaluate(() => window.__pwned ?? null) === null);
  await page.locator(bad).scrollIntoViewIfNeeded();
  await page.evaluate(() => window.scrollTo(0, 0));
  await shot('text');
}

async function numerics() {
  const out = run(path.join(BUILD, 'examples/nan_hunt'), ['--check-numerics=record', '--db', db], 150000);
  const seen = Number(out.match(/bad outputs seen: (\d+)/)?.[1]);
  const stored = Number(out.match(/the first (\d+) are stored/)?.[1]);
  const lastStep = Math.max(...[...out.matchAll(/^step (\d+):/gm)].map((m) => Number(m[1])));
  check('nan_hunt: more alerts than stored', seen > stored && stored === 1000, out.slice(-300));
  check('numerics: tab loads', await openTab('numerics'));
  await page.selectOption('#numerics-run', 'nan_hunt');
  const line = await until(page, () => { const c = document.querySelector('#numerics-capped'); return c && !c.hidden ? c.textContent : null; }, null, 15000);
  // nan_hunt prints a line every 20 steps: its last step is at most 19 on.
  const want = new RegExp(`^The checks raised ${seen} alerts; only the first ${stored} are stored \\(${seen - stored} more were past the limit of gb_enable_check_numerics_mode\\)\\. The last NaN/Inf was at step (\\d+)\\.$`);
  const m = line?.match(want);
  check('numerics: the capped alerts line, with nan_hunt\'s own figures', !!m && Number(m[1]) >= lastStep && Number(m[1]) < lastStep + 20, line);
  await shot('numerics');
}

async function main() {
  await firstRun();
  await scalars();
  await histograms();
  await distributions();
  await text();
  await numerics();
  check('no console errors', errors.length === 0, errors.join('\n'));
}

await finishSuite('webui_first_run', main, { browser, server, work, started });
