// The PR Curves dashboard: a card per tag (a class of a classifier, as
// gb_summary_pr_curves names them "<tag>/<class>"), every selected run's
// curve overlaid at the step the card's slider chooses (each run at its
// newest step up to it), the area under each run's curve in the legend,
// and on hover the threshold, precision, recall and the four counts of the
// point. Only cards on or near the screen are fetched; live updates fetch
// them again, and a slider at the newest step follows new steps.

import { getJSON, pooled } from '../core/api.js';
import { counted, groupedCards, h, regexFrom, visibility } from '../core/dom.js';
import { PrPlot, prAuc } from './plot.js';
import './pr_curves.css';

export const name = 'pr_curves';

const settings = { tagFilter: '' };

export function createPage(ctx) {
  let tagsByRun = {};
  let destroyed = false;
  const cards = new Map();   // tag -> card
  const onScreen = visibility((tag) => { if (!destroyed) fetchCards([tag]).catch(() => {}); });

  const tagInput = h('input.filter', { type: 'search', placeholder: 'Filter tags (regex)', id: 'tag-filter',
    value: settings.tagFilter, spellcheck: false,
    oninput: () => { if (regexFrom(tagInput)) { settings.tagFilter = tagInput.value; layout().catch(() => {}); } } });
  const summary = h('span.muted');
  const grid = h('div.groups');
  const view = h('div.page', null, h('div.toolbar', null, tagInput, summary), grid);

  function wanted() {
    const re = new RegExp(settings.tagFilter || '', 'i');
    const runs = ctx.runs.selected().filter((r) => tagsByRun[r]?.length);
    const tags = [...new Set(runs.flatMap((r) => tagsByRun[r].map((t) => t.tag)))].filter((t) => re.test(t)).sort();
    return { runs, tags, has: (run, tag) => tagsByRun[run]?.some((t) => t.tag === tag) };
  }

  function makeCard(tag) {
    const card = { tag, series: new Map(), generation: -1, atEnd: true };
    const tip = h('div.tooltip.pr-tip');
    tip.hidden = true;
    card.plot = new PrPlot(300, (hit, x, y) => showTip(card, tip, hit, x, y));
    card.stepText = h('span.pr-step');
    card.range = h('input', { type: 'range', min: 0, max: 0, step: 1, value: 0, 'aria-label': `Step of ${tag}`,
      oninput: () => { card.atEnd = +card.range.value === card.steps.length - 1; draw(card); } });
    card.legend = h('div.legend.pr-legend');
    card.el = h('div.card', { 'data-tag': tag },
      h('div.card-head', null, h('div.card-title', { title: tag }, tag)),
      h('div.step-row', null, card.stepText, card.range),
      h('div.pr-body', null, card.plot.el, tip), card.legend);
    card.steps = [];
    return card;
  }

  function showTip(card, tip, hit, x, y) {
    if (!hit) { tip.hidden = true; return; }
    const { curve, i } = hit;
    const row = curve.row, T = row.thresholds;
    const f = (v) => (Number.isInteger(v) ? String(v) : v.toFixed(3));
    tip.replaceChildren(
      h('div.tip-row', null, h('span.swatch', { style: { background: curve.color } }), h('span.tip-run', null, curve.run),
        h('span.muted', null, `step ${row.step}`)),
      h('div.tip-row', null, `threshold ${(i / (T - 1)).toFixed(3)}`),
      h('div.tip-row', null, `precision ${curve.precision[i].toFixed(4)} · recall ${curve.recall[i].toFixed(4)}`),
      h('div.tip-row.tip-num', null, `TP ${f(row.tp[i])} · FP ${f(row.fp[i])} · TN ${f(row.tn[i])} · FN ${f(row.fn[i])}`));
    tip.hidden = false;
    tip.style.left = `${Math.min(x + 14, card.plot.el.clientWidth - tip.offsetWidth - 4)}px`;
    tip.style.top = `${Math.max(4, y - tip.offsetHeight - 10)}px`;
    card.el.dataset.hover = JSON.stringify({ run: curve.run, step: row.step, index: i });
  }

  // The step the slider points at; each run's newest row at or before it.
  function draw(card) {
    const runs = [...card.series.keys()];
    card.steps = [...new Set(runs.flatMap((r) => card.series.get(r).map((row) => row.step)))].sort((a, b) => a - b);
    const n = card.steps.length;
    card.range.max = String(Math.max(0, n - 1));
    if (card.atEnd || +card.range.value > n - 1) card.range.value = String(Math.max(0, n - 1));
    const step = card.steps[+card.range.value];
    card.stepText.textContent = n ? `step ${step} (${+card.range.value + 1}/${n})` : 'no steps yet';
    card.el.dataset.step = String(step ?? '');
    const curves = [];
    for (const run of runs) {
      const rows = card.series.get(run).filter((row) => row.step <= step);
      const row = rows[rows.length - 1];
      if (!row) continue;
      const precision = row.precision.map(Number), recall = row.recall.map(Number);
      curves.push({ run, row, color: ctx.runs.color(run), precision, recall, auc: prAuc(precision, recall) });
    }
    card.plot.set(curves);
    card.legend.replaceChildren(...curves.map((c) => h('span.legend-item', { 'data-run': c.run, 'data-auc': String(c.auc) },
      h('span.swatch', { style: { background: c.color } }), c.run,
      h('span.legend-value', null, `AUC ${c.auc.toFixed(3)}${c.row.step !== step ? ` (step ${c.row.step})` : ''}`))));
  }

  // Brings the cards' series up to the store's generation.
  async function fetchCards(tags) {
    const { runs, has } = wanted();
    const stale = tags.map((t) => cards.get(t)).filter((c) => c && c.generation !== ctx.generation);
    await pooled(stale.map((card) => async () => {
      card.generation = ctx.generation;
      const here = runs.filter((r) => has(r, card.tag));
      const got = await Promise.all(here.map((run) => getJSON('pr_curves/series', { run, tag: card.tag, points: 200 })));
      if (destroyed) return;
      card.series = new Map(here.map((run, k) => [run, got[k].rows]));
      draw(card);
      card.el.dataset.loaded = 'true';
    }), 4);
  }

  async function layout() {
    const { runs, tags } = wanted();
    for (const [tag, c] of cards) if (!tags.includes(tag)) { onScreen.unobserve(c.el); c.plot.destroy(); cards.delete(tag); }
    const added = tags.filter((t) => !cards.has(t));
    for (const tag of added) cards.set(tag, makeCard(tag));
    for (const c of cards.values()) c.generation = -1;   // the runs may have changed
    grid.replaceChildren(...groupedCards(tags, (t) => cards.get(t).el));
    summary.textContent = `${counted(tags.length, 'tag')} · ${counted(runs.length, 'run')}`;
    if (!tags.length) grid.append(h('div.empty', null, ctx.runs.selected().length ? 'No PR curve tag matches.' : 'Select a run to see its PR curves.'));
    for (const tag of added) onScreen.observe(cards.get(tag).el);
    await fetchCards(tags.filter((t) => onScreen.has(t)));
    if (!destroyed) view.dataset.loaded = 'true';
  }

  async function reload() {
    tagsByRun = (await getJSON('pr_curves/tags')).runs;
    const { tags } = wanted();
    if (tags.length !== cards.size || tags.some((t) => !cards.has(t)) || !view.dataset.loaded) await layout();
    else await fetchCards(tags.filter((t) => onScreen.has(t)));
  }

  return {
    view,
    refresh: reload,
    onData: reload,
    onRuns() { layout().catch(() => {}); },
    destroy() { destroyed = true; onScreen.disconnect(); for (const c of cards.values()) c.plot.destroy(); cards.clear(); },
  };
}
