// lazy.mjs — checks for the per-run dashboards' cards that load only when
// near the screen (static/core/tagpage.js): a card below the fold says
// "Loading…" (never "No histograms") until it is scrolled to; every block
// is fetched exactly once however the cards scroll in and out; and a block
// whose fetch returned nothing says so in words.

import path from 'node:path';
import { ARTIFACTS, check, until } from './lib.mjs';

// Counts the page's /api/<plugin>/series requests per "run tag" from now
// on; stop() ends the count.
export function countSeriesRequests(page, plugin) {
  const counts = new Map();
  const onRequest = (r) => {
    const u = new URL(r.url());
    if (u.pathname !== `/api/${plugin}/series`) return;
    const key = `${u.searchParams.get('run')} ${u.searchParams.get('tag')}`;
    counts.set(key, (counts.get(key) || 0) + 1);
  };
  page.on('request', onRequest);
  return { counts, stop: () => page.off('request', onRequest) };
}

const card = (tag) => `.card[data-tag="${tag}"]`;

// The card of tag, below the fold and not yet scrolled to, says it is
// loading, and nothing of it was fetched.
export async function checkBelowFold(page, plugin, tag, requests) {
  const seen = await page.$eval(card(tag), (c) => ({
    below: c.getBoundingClientRect().top > window.innerHeight,
    text: c.innerText,
    states: [...c.querySelectorAll('.run-block')].map((b) => b.dataset.state),
  }));
  check(`${plugin}: card ${tag} starts below the fold`, seen.below);
  check(`${plugin}: a card not loaded yet says "Loading…", not "No histograms"`,
    seen.text.includes('Loading…') && !seen.text.includes('No histograms') && seen.states.every((s) => s === 'loading'),
    JSON.stringify(seen));
  check(`${plugin}: a card below the fold is not fetched before it is scrolled to`,
    ![...requests.counts.keys()].some((k) => k.endsWith(` ${tag}`)), JSON.stringify([...requests.counts]));
}

// Brings every card into view in turn, waiting (bounded) until its blocks
// have loaded; then back to the top.
export async function scrollThrough(page) {
  const tags = await page.$$eval('.card[data-tag]', (cs) => cs.map((c) => c.dataset.tag));
  for (const tag of tags) {
    await page.$eval(card(tag), (c) => c.scrollIntoView());
    await until(page, (sel) => [...document.querySelectorAll(`${sel} .run-block`)].every((b) => b.dataset.state !== 'loading'), card(tag));
  }
  await page.evaluate(() => window.scrollTo(0, 0));
}

// blocks: [{run, tag}] — each requested exactly once, nothing else.
export function checkFetchedOnce(plugin, requests, blocks) {
  const counts = requests.counts;
  const once = blocks.every((b) => counts.get(`${b.run} ${b.tag}`) === 1) && counts.size === blocks.length;
  check(`${plugin}: each block's series fetched once (${blocks.length} blocks)`, once, JSON.stringify([...counts]));
}

// With the server's answer for tag replaced by an empty one (body), the
// block says "No histograms" once its card is scrolled to. Screenshot:
// dashboard-<plugin>-empty.png.
export async function checkEmptyBlock(page, plugin, tag, body) {
  const pattern = `**/api/${plugin}/series?**`;
  await page.route(pattern, (route) => (new URL(route.request().url()).searchParams.get('tag') === tag
    ? route.fulfill({ json: body }) : route.continue()));
  await page.reload();
  await until(page, () => document.querySelector('.page')?.dataset.loaded === 'true');
  await page.$eval(card(tag), (c) => c.scrollIntoView());
  const state = await until(page, (sel) => {
    const b = document.querySelector(`${sel} .run-block`);
    return b?.dataset.state !== 'loading' && { state: b.dataset.state, text: b.innerText };
  }, card(tag));
  check(`${plugin}: a block whose fetch returned nothing says "No histograms"`,
    state?.state === 'empty' && state.text.includes('No histograms'), JSON.stringify(state));
  await page.screenshot({ path: path.join(ARTIFACTS, `dashboard-${plugin}-empty.png`) });
  await page.unroute(pattern);
}
