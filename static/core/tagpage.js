// tagpage.js — the frame shared by the per-run dashboards (histograms,
// distributions, images, text): a tag regex filter, one card per tag, and
// inside each card one block per selected run that has the tag. A page
// supplies only how a block loads, updates and draws:
//   block(run, tag) -> { el, load(), onData(), redraw?(), destroy?() }

import { getJSON, pooled } from './api.js';
import { groupedCards, h, regexFrom, visibility } from './dom.js';

const tagFilters = {};   // per plugin, kept across tab switches

export function tagPage(ctx, { plugin, controls = null, block, noun }) {
  let tagsByRun = {};
  let destroyed = false;
  const cards = new Map();   // tag -> {el, body, blocks: Map(run -> block)}
  // Blocks load when their card comes near the screen, and only those on
  // screen follow live updates.
  const onScreen = visibility((tag) => {
    const c = cards.get(tag);
    if (!c || destroyed) return;
    const bs = [...c.blocks.values()];
    // New blocks load; loaded ones catch up on what came while away.
    loadBlocks(bs.filter((b) => !b.loaded)).catch(() => {});
    pooled(bs.filter((b) => b.loaded).map((b) => () => b.onData()), 6).catch(() => {});
  });
  const loadBlocks = (bs) => pooled(bs.map((b) => async () => { b.loaded = true; await b.load(); }), 6);

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

  async function layout() {
    const { runs, tags, has } = wanted();
    const fresh = [];
    for (const [tag, c] of cards) if (!tags.includes(tag)) { onScreen.unobserve(c.el); for (const b of c.blocks.values()) b.destroy?.(); cards.delete(tag); }
    const added = [];
    for (const tag of tags) {
      let c = cards.get(tag);
      if (!c) {
        const body = h('div.card-body');
        c = { body, blocks: new Map(), el: h('div.card.wide', { 'data-tag': tag },
          h('div.card-head', null, h('div.card-title', { title: tag }, tag)), body) };
        cards.set(tag, c);
        added.push(c);
      }
      const runsHere = runs.filter((r) => has(r, tag));
      for (const [run, b] of c.blocks) if (!runsHere.includes(run)) { b.destroy?.(); c.blocks.delete(run); }
      for (const run of runsHere) if (!c.blocks.has(run)) {
        const b = block(run, tag);
        c.blocks.set(run, b);
        fresh.push([tag, b]);
      }
      c.body.replaceChildren(...runsHere.map((r) => c.blocks.get(r).el));
      c.el.dataset.runs = String(runsHere.length);
    }
    grid.replaceChildren(...groupedCards(tags, (t) => cards.get(t).el));
    summary.textContent = `${tags.length} tag${tags.length === 1 ? '' : 's'} · ${runs.length} run${runs.length === 1 ? '' : 's'}`;
    if (!tags.length) grid.append(h('div.empty', null, ctx.runs.selected().length ? `No ${noun} tag matches.` : `Select a run to see its ${noun}s.`));
    for (const c of added) onScreen.observe(c.el);
    await loadBlocks(fresh.filter(([tag]) => onScreen.has(tag)).map(([, b]) => b));
    if (!destroyed) view.dataset.loaded = 'true';
  }

  const blocks = () => [...cards.values()].flatMap((c) => [...c.blocks.values()]);

  return {
    controls, view,
    redraw() { for (const b of blocks()) b.redraw?.(); },
    async refresh() { tagsByRun = (await getJSON(`${plugin}/tags`)).runs; await layout(); },
    onRuns() { layout().catch(() => {}); },
    async onData() {
      tagsByRun = (await getJSON(`${plugin}/tags`)).runs;
      const old = new Set(blocks());
      await layout();
      const live = [...cards.entries()].filter(([tag]) => onScreen.has(tag)).flatMap(([, c]) => [...c.blocks.values()]);
      await pooled(live.filter((b) => old.has(b) && b.loaded).map((b) => () => b.onData()), 6);
    },
    destroy() { destroyed = true; onScreen.disconnect(); for (const b of blocks()) b.destroy?.(); cards.clear(); },
  };
}

// The label above a run's block: colour swatch and run name.
export function runLabel(ctx, run, ...extra) {
  return h('div.run-label', null, h('span.swatch', { style: { background: ctx.runs.color(run) } }),
    h('span', null, run), ...extra);
}
