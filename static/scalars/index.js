// The Scalars dashboard: one card per tag (card.js), every selected run
// overlaid in its colour, with the sidebar's smoothing, x axis, log scale
// and outlier settings (settings.js). Only the cards on or near the screen
// exist (core/card_window.js), and only those nearer still are fetched and
// kept live (series.js): a logdir board of 10,000 tags holds a few dozen
// cards and fetches the series of the few in view. Runs with numerics
// alerts get a link to the Numerics page in the legend, and their NaN/Inf
// markers open it at the marker's step.
// A link can set the tag filter and the run shown, as the HParams table's
// run links select their run:
//   #scalars?tags=^health/dense_1/&run=R   (the Health page's alerts do)

import { getJSON, pooled } from '../core/api.js';
import { cardWindow } from '../core/card_window.js';
import { counted, h, regexFrom, visibility } from '../core/dom.js';
import { alertRuns } from '../core/numerics-link.js';
import { CARD_HEIGHT, ScalarCard } from './card.js';
import { SeriesCache } from './series.js';
import { scalarControls, settings } from './settings.js';

export const name = 'scalars';
const SCROLL_PAUSE_MS = 80;   // cards made while scrolling fetch after this pause

export function createPage(ctx) {
  const cache = new SeriesCache();
  const cards = new Map();       // tag -> ScalarCard, for the cards that exist
  takeQuery(ctx);
  let tagsByRun = {};
  let alertsByRun = new Map();   // run -> its numerics alerts summary
  let destroyed = false;
  // A card coming near the screen shows the series held for it at once
  // (fetched while it was near before), then catches up with the store.
  const onScreen = visibility((tag) => {
    if (destroyed) return;
    const c = cards.get(tag);
    if (c?.el.dataset.state === 'loading') c.draw();
    catchUp().catch(() => {});
  });

  const controls = scalarControls((key) => {
    // A new axis means new x values: a zoomed range no longer applies.
    if (key === 'x') for (const c of cards.values()) c.resetZoom({ redraw: false });
    redrawAll();
  });
  const tagInput = h('input.filter', { type: 'search', placeholder: 'Filter tags (regex)', value: settings.tagFilter,
    id: 'tag-filter', spellcheck: false,
    oninput: () => { if (regexFrom(tagInput)) { settings.tagFilter = tagInput.value; layout().catch(() => {}); } } });
  const summary = h('span.muted');
  // A card is made when it comes near the screen, drawn at once from the
  // series held (its data is fetched when it comes nearer), and dropped
  // when it goes far away.
  const grid = cardWindow({
    rowHeight: CARD_HEIGHT,
    make(tag) {
      const c = new ScalarCard(tag, env);
      cards.set(tag, c);
      c.draw();
      return c.el;
    },
    made(tag, el) {
      onScreen.observe(el);
      // Already near the screen (scrolled there): its data is due once
      // the scrolling pauses (cards a fling passes over fetch nothing).
      if (onScreen.has(tag)) catchUpSoon();
    },
    drop(tag) {
      const c = cards.get(tag);
      onScreen.unobserve(c.el);
      c.destroy();
      cards.delete(tag);
    },
  });
  const empty = h('div.empty');
  const view = h('div.page', null, h('div.toolbar', null, tagInput, summary), grid.el, empty);

  const env = {
    runs: () => wanted().runs,
    series: (run, tag) => cache.get(run, tag),
    colorOf: (run) => ctx.runs.color(run),
    alertsOf: (run) => alertsByRun.get(run),
    // Whether a run drawn here has the tag but its series is not held yet.
    pending: (tag) => { const w = wanted(); return w.runs.some((r) => w.has(r, tag) && !cache.get(r, tag)); },
  };

  async function loadTags() {
    // The alert links are extras: the charts never wait on or fail with them.
    const alerts = alertRuns().catch(() => alertsByRun);
    tagsByRun = (await getJSON('scalars/tags')).runs;
    tagSets = new Map(Object.entries(tagsByRun).map(([run, ts]) => [run, new Set(ts.map((t) => t.tag))]));
    want = null;
    alertsByRun = await alerts;
  }

  // The runs drawn and the tags shown, worked out once per change of the
  // tags, the runs selected or the filter (every card asks, and a logdir
  // board has thousands of both: once per card would be quadratic).
  let tagSets = new Map();   // run -> Set of its tags
  let want = null;
  let wantKey = '';
  function wanted() {
    const selected = ctx.runs.selected();
    const key = `${settings.tagFilter}\n${selected.join('\n')}`;
    if (want && key === wantKey) return want;
    const re = new RegExp(settings.tagFilter || '', 'i');
    const runs = selected.filter((r) => tagsByRun[r]);
    const all = new Set();
    for (const r of runs) for (const t of tagSets.get(r) ?? []) all.add(t);
    const tags = [...all].filter((t) => re.test(t)).sort();
    wantKey = key;
    want = { runs, tags, has: (run, tag) => tagSets.get(run)?.has(tag) ?? false };
    return want;
  }

  // Brings the series of the cards on screen up to the store's generation;
  // resolves to the tags whose series changed.
  async function update() {
    const { runs, tags, has } = wanted();
    const touched = new Set();
    const jobs = tags.filter((t) => onScreen.has(t)).flatMap((tag) => runs.filter((run) => has(run, tag)).map((run) => async () => {
      if (await cache.update(run, tag, ctx.generation)) touched.add(tag);
    }));
    await pooled(jobs, 6);
    return touched;
  }

  let catchUpTimer = 0;
  function catchUpSoon() {
    clearTimeout(catchUpTimer);
    catchUpTimer = setTimeout(() => { if (!destroyed) catchUp().catch(() => {}); }, SCROLL_PAUSE_MS);
  }

  // Cards that came on screen, or a live change: redraw what changed.
  async function catchUp() {
    const touched = await update();
    if (!destroyed) for (const t of touched) cards.get(t)?.draw();
  }

  // The wanted tags in the card window; then the data of those on screen.
  async function layout() {
    const { runs, tags } = wanted();
    cache.keepRuns(runs);
    grid.set(tags);
    summary.textContent = `${counted(tags.length, 'tag')} · ${counted(runs.length, 'run')}`;
    empty.hidden = tags.length > 0;
    empty.textContent = ctx.runs.selected().length ? 'No scalar tag matches.' : 'Select a run to see its scalars.';
    await update();
    if (destroyed) return;
    redrawAll();
    view.dataset.loaded = 'true';
  }

  // Cards on (or near) the screen, and those drawn before (their settings
  // changed); the others say "Loading…" until they come into view.
  function redrawAll() {
    for (const [tag, c] of cards) if (onScreen.has(tag) || c.el.dataset.state !== 'loading') c.draw();
  }

  return {
    controls, view,
    async refresh() { await loadTags(); await layout(); },
    onRuns() { layout().catch(() => {}); },
    onQuery() {
      takeQuery(ctx);
      tagInput.value = settings.tagFilter;
      layout().catch(() => {});
    },
    async onData() {
      const before = wanted().tags;
      await loadTags();
      const { tags } = wanted();
      if (tags.length !== before.length || tags.some((t, i) => t !== before[i])) await layout();
      await catchUp();
    },
    destroy() { destroyed = true; clearTimeout(catchUpTimer); onScreen.disconnect(); grid.destroy(); },
  };
}

// A link's tag filter (a regex) and run, then the one run selected.
function takeQuery(ctx) {
  const q = ctx.query();
  if (q.has('tags')) settings.tagFilter = q.get('tags');
  if (q.get('run')) ctx.runs.setSelected([q.get('run')]);
}
