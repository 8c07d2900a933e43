// tagpage.js — the frame shared by the per-run dashboards (histograms,
// distributions, images, text): a tag regex filter, one card per tag, and
// inside each card one block per selected run that has the tag. A page
// supplies only how a block fetches and draws:
//   block(run, tag) -> { el, load() -> items fetched, redraw?(), destroy?() }
// and, optionally, blockHeight() the pixels a block's chart will take, and
// wide: false for cards that share a row (a grid, as on Scalars) rather
// than each taking the page's width.
//
// The frame fetches a block when its card comes near the screen, and again
// only when the store has changed since (ctx.generation): scrolling a card
// out and back, or a layout and a live update arriving together, never
// fetch the same data twice. It also says where a block stands (see
// blockstate.js): "Loading…" until the first fetch returns, "No <noun>s"
// only once one returned nothing.

import { getJSON, pooled } from './api.js';
import { blockState } from './blockstate.js';
import { counted, groupedCards, h, regexFrom, visibility } from './dom.js';

const tagFilters = {};   // per plugin, kept across tab switches

export function tagPage(ctx, { plugin, controls = null, block, blockHeight = () => 0, noun, wide = true }) {
  let tagsByRun = {};
  let destroyed = false;
  const cards = new Map();   // tag -> {el, body, blocks: Map(run -> block)}
  const onScreen = visibility((tag) => {
    if (!destroyed) fetchStale(blocksOf(tag)).catch(() => {});
  });

  const tagInput = h('input.filter', { type: 'search', placeholder: 'Filter tags (regex)', id: 'tag-filter',
    value: tagFilters[plugin] || '', spellcheck: false,
    oninput: () => { if (regexFrom(tagInput)) { tagFilters[plugin] = tagInput.value; layout().catch(() => {}); } } });
  const summary = h('span.muted');
  const grid = h('div.groups');
  const view = h('div.page', null, h('div.toolbar', null, tagInput, summary), grid);

  function wanted() {
    const re = new RegExp(tagFilters[plugin] || '', 'i');
    const runs = ctx.runs.selected().filter((r) => tagsByRun[r]?.length);
    const tags = [...new Set(runs.flatMap((r) => tagsByRun[r].map((t) => t.tag)))].filter((t) => re.test(t)).sort();
    return { runs, tags, has: (run, tag) => tagsByRun[run]?.some((t) => t.tag === tag) };
  }

  const blocksOf = (tag) => [...(cards.get(tag)?.blocks.values() ?? [])];
  const allBlocks = () => [...cards.keys()].flatMap(blocksOf);

  // ---- fetching ---------------------------------------------------------------
  // Blocks not fetched since the store last changed, at most 6 at a time.
  function fetchStale(bs) {
    return pooled(bs.filter((b) => b.generation !== ctx.generation).map((b) => () => fetchBlock(b)), 6);
  }

  // A block's fetches run one after another, so a late answer never
  // replaces a newer one.
  function fetchBlock(b) {
    b.generation = ctx.generation;
    b.queue = b.queue.then(() => b.state.track(b.load()));
    return b.queue;
  }

  // ---- cards ------------------------------------------------------------------
  function makeBlock(run, tag) {
    const b = block(run, tag);
    b.state = blockState(b.el, noun, blockHeight());
    b.queue = Promise.resolve();
    return b;
  }

  function makeCard(tag) {
    const body = h('div.card-body');
    return { body, blocks: new Map(), el: h(wide ? 'div.card.wide' : 'div.card', { 'data-tag': tag },
      h('div.card-head', null, h('div.card-title', { title: tag }, tag)), body) };
  }

  function dropCard(tag) {
    const c = cards.get(tag);
    onScreen.unobserve(c.el);
    for (const b of c.blocks.values()) b.destroy?.();
    cards.delete(tag);
  }

  // A card's blocks follow the selected runs that have its tag.
  function syncBlocks(c, tag, runsHere) {
    for (const [run, b] of c.blocks) if (!runsHere.includes(run)) { b.destroy?.(); c.blocks.delete(run); }
    for (const run of runsHere) if (!c.blocks.has(run)) c.blocks.set(run, makeBlock(run, tag));
    c.body.replaceChildren(...runsHere.map((r) => c.blocks.get(r).el));
    c.el.dataset.runs = String(runsHere.length);
  }

  async function layout() {
    const { runs, tags, has } = wanted();
    for (const tag of [...cards.keys()]) if (!tags.includes(tag)) dropCard(tag);
    const added = tags.filter((t) => !cards.has(t));
    for (const tag of added) cards.set(tag, makeCard(tag));
    for (const tag of tags) syncBlocks(cards.get(tag), tag, runs.filter((r) => has(r, tag)));
    grid.replaceChildren(...groupedCards(tags, (t) => cards.get(t).el));
    summary.textContent = `${counted(tags.length, 'tag')} · ${counted(runs.length, 'run')}`;
    if (!tags.length) grid.append(h('div.empty', null, ctx.runs.selected().length ? `No ${noun} tag matches.` : `Select a run to see its ${noun}s.`));
    for (const tag of added) onScreen.observe(cards.get(tag).el);
    await fetchStale(tags.filter((t) => onScreen.has(t)).flatMap(blocksOf));
    if (!destroyed) view.dataset.loaded = 'true';
  }

  // The first load and every live update alike: new tags, then what is
  // stale on screen.
  async function reload() {
    tagsByRun = (await getJSON(`${plugin}/tags`)).runs;
    await layout();
  }

  return {
    controls, view,
    redraw() { for (const b of allBlocks()) b.redraw?.(); },
    refresh: reload,
    onData: reload,
    onRuns() { layout().catch(() => {}); },
    destroy() { destroyed = true; onScreen.disconnect(); for (const b of allBlocks()) b.destroy?.(); cards.clear(); },
  };
}

// The label above a run's block: colour swatch and run name.
export function runLabel(ctx, run, ...extra) {
  return h('div.run-label', null, h('span.swatch', { style: { background: ctx.runs.color(run) } }),
    h('span', null, run), ...extra);
}
