// scalars_window.test.mjs — the Scalars page with 10,000 tags (a logdir of
// 10 stores x 1,000 tags, 20 points each, by tests/write_logdir), driven in
// Debian's chromium with the real mouse wheel and keyboard:
//   - the page holds a few dozen card elements, not 10,000, in a grid as
//     tall as all of them; series are fetched for the cards near the
//     screen only;
//   - scrolled by the wheel far down and back, the cards that come into
//     view are the right tags, in order, and show the right values: with
//     smoothing at 0 each legend's last value is the store's last point,
//     sin(0.019 + t) for tag m<t> (the writer's formula), and the API's.
// Screenshots: <build>/tests/artifacts/scalars_window_*.png.

import fs from 'node:fs';
import path from 'node:path';
import { apiJSON, ARTIFACTS, BUILD, check, finishSuite, launchBrowser, requireBrowser, run, startServerWith, tabLoaded, tempDir, until, watchedPage } from './lib.mjs';

requireBrowser('webui_scalars_window');
const started = Date.now();
const work = tempDir('gb-scalars-window-');
const logdir = path.join(work, 'logs');
fs.mkdirSync(ARTIFACTS, { recursive: true });

const RUNS = 10, TAGS = 1000, PER_TAG = 20;
run(path.join(BUILD, 'tests/write_logdir'), [logdir, String(RUNS), String(TAGS), String(RUNS * TAGS * PER_TAG), String(PER_TAG), '1'], 120000);

const server = await startServerWith(['--logdir', logdir]);
const browser = await launchBrowser(path.join(work, 'profile'));
const { page, errors } = await watchedPage(browser, { width: 1400, height: 900 });
const shot = (name) => page.screenshot({ path: path.join(ARTIFACTS, `scalars_window_${name}.png`) });
const seriesAsked = new Set();
page.on('request', (r) => {
  const u = new URL(r.url());
  if (u.pathname.endsWith('/api/scalars/series')) seriesAsked.add(u.searchParams.get('tag'));
});

// What the writer wrote: tag r<run>/m<t> of run group_00/run_<run>/train,
// its last point at step 19.
const runOf = (tag) => `group_00/run_${tag.slice(1, 5)}/train`;
const lastValue = (tag) => Math.sin((PER_TAG - 1) * 1e-3 + Number(tag.split('/m')[1]));
const shown = (v) => Number(v.toPrecision(5)).toString();   // the legend's format (core/dom.js fmtValue)

// The cards wholly inside the viewport: tag, state, legend value.
const cardsInView = () => page.$$eval('.card[data-tag]', (cs) => cs.filter((c) => {
  const r = c.getBoundingClientRect();
  return r.top >= 0 && r.bottom <= window.innerHeight;
}).map((c) => ({ tag: c.dataset.tag, state: c.dataset.state, points: c.dataset.points, value: c.querySelector('.legend-value')?.textContent })));

async function checkInView(label, allTags) {
  const ready = await until(page, () => {
    const cs = [...document.querySelectorAll('.card[data-tag]')].filter((c) => { const r = c.getBoundingClientRect(); return r.top >= 0 && r.bottom <= window.innerHeight; });
    return cs.length > 0 && cs.every((c) => c.dataset.state === 'ready');
  }, null, 15000);
  const cards = await cardsInView();
  check(`${label}: the cards in view are drawn`, !!ready && cards.length >= 2, JSON.stringify(cards));
  const at = allTags.indexOf(cards[0]?.tag);
  check(`${label}: they are consecutive tags, in order`, at >= 0 && cards.every((c, i) => c.tag === allTags[at + i]), cards.map((c) => c.tag).join());
  const bad = cards.filter((c) => c.value !== shown(lastValue(c.tag)) || c.points !== JSON.stringify({ [runOf(c.tag)]: PER_TAG }));
  check(`${label}: each shows its store's last value and ${PER_TAG} points`, bad.length === 0, JSON.stringify(bad.slice(0, 3)));
  // The engine's own figure for one of them.
  const api = await apiJSON(server, 'scalars/series', { run: runOf(cards[0].tag), tag: cards[0].tag });
  check(`${label}: the API's last value is the legend's`, shown(api.value[api.value.length - 1]) === cards[0].value, `${api.value.at(-1)} vs ${cards[0].value}`);
  return cards;
}

await finishSuite('webui_scalars_window', async () => {
  const api = await apiJSON(server, 'scalars/tags');
  const allTags = Object.values(api.runs).flatMap((ts) => ts.map((t) => t.tag)).sort();
  check('api: 10,000 tags in 10 runs', allTags.length === RUNS * TAGS && Object.keys(api.runs).length === RUNS, `${allTags.length}`);

  await page.goto(`${server.url}#scalars`);
  check('scalars: tab loads', await tabLoaded(page, 'scalars', 30000));
  const summary = await page.$eval('.toolbar .muted', (e) => e.textContent);
  check('scalars: the toolbar counts every tag', summary === '10,000 tags · 10 runs', summary);
  const held = await page.$$eval('.card[data-tag]', (c) => c.length);
  check('scalars: a few dozen card elements, not 10,000', held > 0 && held < 100, `${held}`);
  const tall = await page.evaluate(() => document.documentElement.scrollHeight);
  check('scalars: the page is as tall as 10,000 cards in rows', tall > 10000 / 2 * 352, `${tall}`);

  // Smoothing to 0 with the keyboard: the legend then shows the raw last value.
  await page.click('#smoothing');
  await page.keyboard.press('Home');
  check('smoothing: 0 by the keyboard', await until(page, () => document.querySelector('#smoothing').value === '0'));
  await checkInView('top', allTags);
  await shot('top');

  // Far down with the wheel, over the cards.
  await page.mouse.move(800, 500);
  for (let i = 0; i < 40; i++) await page.mouse.wheel(0, 4000);
  const y = await until(page, () => window.scrollY > 100000 && window.scrollY, null, 15000);
  check('wheel: the page scrolled far down', !!y, `${y}`);
  const middle = await checkInView('after 40 wheel turns', allTags);
  check('wheel: the cards in view are far from the first', allTags.indexOf(middle[0]?.tag) > 500, middle[0]?.tag);
  await shot('middle');
  const heldThere = await page.$$eval('.card[data-tag]', (c) => c.length);
  check('wheel: still a few dozen card elements', heldThere > 0 && heldThere < 100, `${heldThere}`);

  // The end of the grid, then most of the way back up.
  for (let i = 0; i < 200; i++) await page.mouse.wheel(0, 20000);
  await until(page, () => window.scrollY + window.innerHeight >= document.documentElement.scrollHeight - 2, null, 15000);
  const last = await checkInView('at the end', allTags);
  check('the end: the last tag is the last card', last.at(-1)?.tag === allTags.at(-1) ||
    (await page.$$eval('.card[data-tag]', (cs) => cs.map((c) => c.dataset.tag))).includes(allTags.at(-1)), last.map((c) => c.tag).join());
  await shot('end');
  for (let i = 0; i < 30; i++) await page.mouse.wheel(0, -6000);
  await checkInView('back up', allTags);

  check('series fetched only for cards near the screen', seriesAsked.size > 0 && seriesAsked.size < 400, `${seriesAsked.size} tags fetched`);
  check('no console errors, no failed requests', errors.length === 0, errors.join('\n'));
}, { browser, server, work, started });
