// The Scalars dashboard: one card per tag, every selected run overlaid in
// its colour; smoothing (debiased EMA, raw line faint behind), x axis by
// step / relative / wall time, linear or log y, ignore outliers, tooltip,
// NaN/Inf markers, min/max envelope where the server downsampled, zoom by
// dragging (re-fetched at full resolution for the range), CSV/JSON export.
// Runs with numerics alerts get a link to the Numerics page in the legend,
// and their NaN/Inf markers open it at the marker's step.

import { getJSON, pooled } from '../core/api.js';
import { alpha, autosize, join, tooltip, uPlot, xAxis, yAxis } from '../core/chart.js';
import { download, fmtValue, groupedCards, h, num, regexFrom, safeFileName, visibility } from '../core/dom.js';
import { alertLink, alertRuns, openNumerics } from '../core/numerics-link.js';
import { quantile, smooth } from './smoothing.js';

export const name = 'scalars';

const POINTS = 1000;          // per series: ~2 per pixel of a wide card
const REFETCH_AFTER = 4000;   // rows held before a live series is re-bucketed
const HEIGHT = 260;

// Settings survive tab switches.
const settings = { smoothing: 0.6, x: 'step', log: false, outliers: false, tagFilter: '' };

export function createPage(ctx) {
  const cache = new Map();    // "run\0tag" -> series
  const loading = new Map();  // "run\0tag" -> promise of a first fetch
  const cards = new Map();    // tag -> card
  let tagsByRun = {};
  let alertsByRun = new Map();  // run -> its numerics alerts summary
  let destroyed = false;
  // Only cards on or near the screen are fetched and kept live.
  const onScreen = visibility(() => {
    if (destroyed) return;
    // true: series cached while the card was away catch up too.
    ensureLoaded(true).then((touched) => { for (const t of touched) cards.get(t)?.draw(); }).catch(() => {});
  });

  // ---- controls ---------------------------------------------------------
  const smoothVal = h('span.value', null, settings.smoothing.toFixed(2));
  const slider = h('input', { type: 'range', min: 0, max: 0.99, step: 0.01, value: settings.smoothing,
    id: 'smoothing', 'aria-label': 'Smoothing',
    oninput: () => { settings.smoothing = +slider.value; smoothVal.textContent = settings.smoothing.toFixed(2); redrawAll(); } });
  const radio = (group, value, label) => h('label.radio', null,
    h('input', { type: 'radio', name: group, value, checked: settings[group] === value,
      onchange: () => { settings[group] = value; for (const c of cards.values()) c.zoom = null; redrawAll(); } }), label);
  const check = (key, label, id) => h('label.check', null,
    h('input', { type: 'checkbox', id, checked: settings[key],
      onchange: (e) => { settings[key] = e.target.checked; redrawAll(); } }), label);
  const controls = h('div', null,
    h('div.section-title', null, 'Smoothing'), h('div.slider-row', null, slider, smoothVal),
    h('div.section-title', null, 'Horizontal axis'),
    h('div.radios', null, radio('x', 'step', 'Step'), radio('x', 'relative', 'Relative'), radio('x', 'wall', 'Wall')),
    h('div.section-title', null, 'Vertical axis'),
    check('log', 'Log scale', 'log-scale'), check('outliers', 'Ignore outliers', 'ignore-outliers'));

  const tagInput = h('input.filter', { type: 'search', placeholder: 'Filter tags (regex)', value: settings.tagFilter,
    id: 'tag-filter', spellcheck: false,
    oninput: () => { if (regexFrom(tagInput)) { settings.tagFilter = tagInput.value; layout(); } } });
  const summary = h('span.muted');
  const grid = h('div.groups');
  const view = h('div.page', null, h('div.toolbar', null, tagInput, summary), grid);

  // ---- data ---------------------------------------------------------------
  const key = (run, tag) => `${run}\u0000${tag}`;

  function toSeries(r) {
    return {
      downsampled: r.downsampled, total: r.total_points,
      // Raw points come without step_last/min/max: they equal step/value.
      step: r.step, step_last: r.step_last ?? r.step.slice(), wall: r.wall, value: r.value.map(num),
      min: (r.min ?? r.value).map(num), max: (r.max ?? r.value).map(num),
      nan: r.nan, posinf: r.posinf, neginf: r.neginf,
    };
  }

  async function fetchFull(run, tag, params = {}) {
    return toSeries(await getJSON('scalars/series', { run, tag, points: POINTS, ...params }));
  }

  // Steps after the last one held, appended (live updates).
  async function fetchNew(run, tag, s) {
    // A bucket's row is at its first step: ask for what follows its last.
    const last = s.step_last.length ? s.step_last[s.step_last.length - 1] : -1;
    const r = await getJSON('scalars/series', { run, tag, points: POINTS, since: last });
    if (!r.step.length) return false;
    const add = toSeries(r);
    if (add.downsampled || s.step.length + add.step.length > REFETCH_AFTER) {
      Object.assign(s, await fetchFull(run, tag));
      return true;
    }
    for (const k of ['step', 'step_last', 'wall', 'value', 'min', 'max', 'nan', 'posinf', 'neginf']) s[k].push(...add[k]);
    s.total += add.total;
    return true;
  }

  async function loadTags() {
    // The alert links are extras: the charts never wait on or fail with them.
    const alerts = alertRuns().catch(() => alertsByRun);
    tagsByRun = (await getJSON('scalars/tags')).runs;
    alertsByRun = await alerts;
  }

  function wanted() {
    const re = new RegExp(settings.tagFilter || '', 'i');
    const runs = ctx.runs.selected().filter((r) => tagsByRun[r]);
    const tags = [...new Set(runs.flatMap((r) => tagsByRun[r].map((t) => t.tag)))].filter((t) => re.test(t)).sort();
    return { runs, tags, has: (run, tag) => tagsByRun[run]?.some((t) => t.tag === tag) };
  }

  async function ensureLoaded(live) {
    const { runs, tags, has } = wanted();
    const jobs = [];
    const touched = new Set();
    for (const tag of tags) for (const run of runs) {
      if (!has(run, tag) || !onScreen.has(tag)) continue;
      const k = key(run, tag), s = cache.get(k);
      if (!s) {
        // One request per series even when a layout and a live update
        // both ask for it at once.
        if (!loading.has(k)) {
          loading.set(k, fetchFull(run, tag).then((x) => { cache.set(k, x); }).finally(() => loading.delete(k)));
        }
        const p = loading.get(k);
        jobs.push(async () => { await p; touched.add(tag); });
      }
      else if (live) jobs.push(async () => { if (await fetchNew(run, tag, s)) touched.add(tag); });
    }
    await pooled(jobs, 6);
    return touched;
  }

  // ---- cards -----------------------------------------------------------------
  function layout() {
    const { runs, tags } = wanted();
    // Series of runs no longer shown are dropped: they would miss live
    // updates while hidden, so showing the run again fetches it afresh.
    for (const k of cache.keys()) if (!runs.includes(k.split('\u0000')[0])) cache.delete(k);
    for (const [tag, c] of cards) if (!tags.includes(tag)) { onScreen.unobserve(c.el); c.destroy(); cards.delete(tag); }
    const added = tags.filter((t) => !cards.has(t));
    for (const tag of added) cards.set(tag, makeCard(tag));
    grid.replaceChildren(...groupedCards(tags, (t) => cards.get(t).el));
    for (const tag of added) onScreen.observe(cards.get(tag).el);
    summary.textContent = `${tags.length} tag${tags.length === 1 ? '' : 's'} · ${runs.length} run${runs.length === 1 ? '' : 's'}`;
    if (!tags.length) grid.append(h('div.empty', null, ctx.runs.selected().length ? 'No scalar tag matches.' : 'Select a run to see its scalars.'));
    return ensureLoaded(false).then(() => {
      if (destroyed) return;
      redrawAll();
      view.dataset.loaded = 'true';
    });
  }

  function redrawAll() { for (const c of cards.values()) c.draw(); }

  function makeCard(tag) {
    // The final height from the start: what is "near the screen" must not
    // change as charts appear.
    const chartBox = h('div.chart', { style: { minHeight: `${HEIGHT}px` } });
    const legend = h('div.legend');
    const title = h('div.card-title', { title: tag }, tag);
    const note = h('span.note');
    const card = { tag, zoom: null, zoomData: null, plot: null, sig: '', stopResize: null, markers: [] };
    const buttons = h('div.card-actions', null,
      h('button.small', { type: 'button', title: 'Reset zoom', onclick: () => { card.zoom = null; card.zoomData = null; card.draw(); } }, 'Reset'),
      h('button.small', { type: 'button', title: 'Download CSV', onclick: () => exportCard(tag, 'csv') }, 'CSV'),
      h('button.small', { type: 'button', title: 'Download JSON', onclick: () => exportCard(tag, 'json') }, 'JSON'));
    card.el = h('div.card', { 'data-tag': tag }, h('div.card-head', null, title, note, buttons), chartBox, legend);
    const tip = tooltip(card.el);

    card.destroy = () => { card.plot?.destroy(); card.stopResize?.(); };

    // The drawn runs of this card, each with x values for the axis mode.
    card.parts = () => {
      const out = [];
      for (const run of wanted().runs) {
        const s = (card.zoomData && card.zoomData.get(run)) || cache.get(key(run, tag));
        if (!s || !s.step.length) continue;
        const full = cache.get(key(run, tag)) || s;
        const t0 = full.wall[0];
        const x = settings.x === 'step' ? s.step : strictlyIncreasing(settings.x === 'wall' ? s.wall : s.wall.map((w) => w - t0));
        out.push({ run, s, x });
      }
      return out;
    };

    card.draw = () => {
      const parts = card.parts();
      const w = settings.smoothing;
      const series = [{}];
      const cols = [];
      const bands = [];
      const markers = [];
      const drawn = [];
      for (const { run, s, x } of parts) {
        const color = ctx.runs.color(run);
        const clean = (v) => (v === null || !Number.isFinite(v) || (settings.log && v <= 0) ? null : v);
        const raw = s.value.map(clean);
        const sm = smooth(s.value, w).map(clean);
        const ys = [raw, sm];
        // A sparse series gets dots, or a single point would be invisible.
        const dots = { show: s.step.length <= 40, size: 6, fill: color };
        series.push({ label: `${run} (raw)`, stroke: alpha(color, w > 0 ? 0.25 : 1), width: 1, spanGaps: true, points: w > 0 ? { show: false } : dots });
        series.push({ label: run, stroke: color, width: 1.75, spanGaps: true, show: w > 0, points: dots });
        if (s.downsampled) {
          ys.push(s.max.map(clean), s.min.map(clean));
          series.push({ label: `${run} max`, stroke: 'transparent', points: { show: false }, spanGaps: true });
          series.push({ label: `${run} min`, stroke: 'transparent', points: { show: false }, spanGaps: true });
          bands.push({ series: [series.length - 2, series.length - 1], fill: alpha(color, 0.14) });
        }
        for (let i = 0; i < s.step.length; i++) {
          const v = s.value[i];
          if (s.nan[i] || s.posinf[i] || s.neginf[i] || (v !== null && !Number.isFinite(v))) {
            const kind = s.nan[i] || Number.isNaN(v) ? 'nan' : s.posinf[i] || v === Infinity ? 'posinf' : 'neginf';
            markers.push({ x: x[i], kind, color, run, step: s.step[i], stepLast: s.step_last[i] });
          }
        }
        cols.push({ x, ys });
        drawn.push({ run, s, x, sm: smooth(s.value, w) });
      }
      card.markers = markers;
      card.el.dataset.runs = String(parts.length);
      card.el.dataset.points = JSON.stringify(Object.fromEntries(parts.map((p) => [p.run, p.s.step.length])));
      card.el.dataset.markers = String(markers.length);
      card.el.dataset.series = String(series.length - 1);
      card.el.dataset.zoomed = String(!!card.zoom);
      card.el.dataset.downsampled = String(parts.some((p) => p.s.downsampled));
      card.el.dataset.total = String(parts.reduce((a, p) => a + p.s.total, 0));
      note.textContent = parts.some((p) => p.s.downsampled) ? 'downsampled · min/max envelope' : '';
      if (card.zoom) note.textContent = 'zoomed';

      const data = join(cols);
      card.data = data;
      card.runsDrawn = drawn;
      const sig = JSON.stringify([series.map((x) => x.label), settings.x, settings.log, settings.outliers, w > 0, !!card.zoom]);
      const yRange = yRangeFor(data, series);
      if (card.plot && sig === card.sig) {
        card.yRange = yRange;
        card.plot.setData(data, !card.zoom);
        if (card.zoom) card.plot.setScale('x', card.zoom);
      } else {
        card.plot?.destroy();
        card.stopResize?.();
        card.sig = sig;
        card.yRange = yRange;
        const width = Math.max(300, chartBox.clientWidth || 460);
        card.plot = new uPlot({
          width, height: HEIGHT, series, bands,
          legend: { show: false },
          scales: {
            x: { time: settings.x === 'wall', ...(card.zoom ? { auto: false, min: card.zoom.min, max: card.zoom.max } : {}) },
            y: { distr: settings.log ? 3 : 1, range: (u, min, max) => rangeOf(card.yRange, min, max) },
          },
          axes: [xAxis(settings.x), yAxis()],
          cursor: { drag: { x: true, y: false, setScale: false }, points: { size: 6 } },
          hooks: {
            setCursor: [(u) => showTip(u, card, tip)],
            setSelect: [(u) => onSelect(u, card)],
            draw: [(u) => drawMarkers(u, card)],
          },
        }, data, chartBox);
        card.plot.over.addEventListener('mouseleave', () => tip.hide());
        card.plot.over.addEventListener('dblclick', () => { card.zoom = null; card.zoomData = null; card.draw(); });
        followMarkerLinks(card);
        card.stopResize = autosize(card.plot, chartBox, HEIGHT);
      }
      legend.replaceChildren(...drawn.map(({ run, sm }) => {
        const last = sm.length ? sm[sm.length - 1] : null;
        return h('span.legend-item', null, h('span.swatch', { style: { background: ctx.runs.color(run) } }),
          h('span.legend-run', null, run), h('span.legend-value', null, fmtValue(last)), alertLink(run, alertsByRun.get(run)));
      }));
    };
    return card;
  }

  // Points written within the same microsecond would share an x value and
  // hide each other on a time axis: nudge them apart by a microsecond.
  function strictlyIncreasing(xs) {
    const out = xs.slice();
    for (let i = 1; i < out.length; i++) if (out[i] <= out[i - 1]) out[i] = out[i - 1] + 1e-6;
    return out;
  }

  // y range: all finite values, or the 5th..95th percentile band ("ignore
  // outliers"), padded; uPlot's own range when nothing is drawn.
  function yRangeFor(data, series) {
    if (!settings.outliers) return null;
    const vals = [];
    for (let i = 1; i < data.length; i++) if (!series[i].label.endsWith(' max') && !series[i].label.endsWith(' min')) vals.push(...data[i]);
    const lo = quantile(vals, 0.05), hi = quantile(vals, 0.95);
    if (lo === null) return null;
    const pad = (hi - lo) * 0.1 || Math.abs(hi) * 0.1 || 1;
    return [settings.log ? Math.max(lo - pad, lo / 2) : lo - pad, hi + pad];
  }

  function rangeOf(fixed, min, max) {
    if (fixed) return fixed;
    if (min === null || max === null) return [0, 1];
    if (settings.log) return uPlot.rangeLog(min, max, 10, true);
    return uPlot.rangeNum(min, max, 0.1, true);
  }

  function showTip(u, card, tip) {
    const idx = u.cursor.idx;
    if (idx === null || idx === undefined || !card.runsDrawn?.length) { tip.hide(); return; }
    const xv = u.data[0][idx];
    const rows = [];
    for (const { run, s, x, sm } of card.runsDrawn) {
      const i = nearestIndex(x, xv);
      if (i < 0) continue;
      rows.push(h('div.tip-row', null,
        h('span.swatch', { style: { background: ctx.runs.color(run) } }),
        h('span.tip-run', null, run),
        h('span.tip-num', null, `step ${s.step[i]}`),
        h('span.tip-num', null, `value ${fmtValue(s.value[i])}`),
        settings.smoothing > 0 ? h('span.tip-num', null, `smoothed ${fmtValue(sm[i])}`) : null,
        s.downsampled ? h('span.tip-num.muted', null, `min ${fmtValue(s.min[i])} max ${fmtValue(s.max[i])}`) : null));
    }
    tip.show(u, rows);
  }

  // Index of the x value nearest to xv in ascending xs (-1 when outside).
  function nearestIndex(xs, xv) {
    if (!xs.length || xv < xs[0] - (xs[1] - xs[0] || 1) || xv > xs[xs.length - 1] + (xs[xs.length - 1] - xs[xs.length - 2] || 1)) return -1;
    let lo = 0, hi = xs.length - 1;
    while (hi - lo > 1) {
      const mid = (lo + hi) >> 1;
      if (xs[mid] <= xv) lo = mid; else hi = mid;
    }
    return Math.abs(xs[lo] - xv) <= Math.abs(xs[hi] - xv) ? lo : hi;
  }

  // A marker's place in canvas pixels: +Inf at the top edge, -Inf at the
  // bottom, NaN just below the top row.
  function markerY(u, m) {
    const { top, height } = u.bbox;
    return m.kind === 'neginf' ? top + height - 7 : m.kind === 'posinf' ? top + 7 : top + 19;
  }

  function drawMarkers(u, card) {
    const c = u.ctx;
    const { left, width } = u.bbox;
    c.save();
    for (const m of card.markers) {
      const x = u.valToPos(m.x, 'x', true);
      if (x < left - 1 || x > left + width + 1) continue;
      const y = markerY(u, m);
      c.fillStyle = m.color;
      c.strokeStyle = '#b71c1c';
      c.lineWidth = 1.5;
      c.beginPath();
      if (m.kind === 'nan') {
        c.arc(x, y, 4.5, 0, 2 * Math.PI);
      } else {
        const d = m.kind === 'posinf' ? -1 : 1;
        c.moveTo(x, y + 5 * d); c.lineTo(x - 5, y - 4 * d); c.lineTo(x + 5, y - 4 * d); c.closePath();
      }
      c.fill();
      c.stroke();
    }
    c.restore();
  }

  // The marker of a run with numerics alerts under the mouse (within 8 CSS
  // pixels of its centre), or null.
  function linkedMarkerAt(u, card, e) {
    const ratio = u.over.getBoundingClientRect().width / (u.bbox.width || 1) || 1;
    let best = null, bestD = 64;
    for (const m of card.markers) {
      if (!alertsByRun.has(m.run)) continue;
      const dx = e.offsetX - u.valToPos(m.x, 'x'), dy = e.offsetY - (markerY(u, m) - u.bbox.top) * ratio;
      const d = dx * dx + dy * dy;
      if (d <= bestD) { best = m; bestD = d; }
    }
    return best;
  }

  // A click (not the end of a drag) on such a marker opens the Numerics page
  // at its run and step (a bucket's steps when downsampled); the pointer
  // says so while over one.
  function followMarkerLinks(card) {
    const over = card.plot.over;
    let down = null;
    over.addEventListener('mousedown', (e) => { down = [e.clientX, e.clientY]; });
    over.addEventListener('mousemove', (e) => {
      over.classList.toggle('over-link', !!linkedMarkerAt(card.plot, card, e));
    });
    over.addEventListener('click', (e) => {
      if (down && Math.hypot(e.clientX - down[0], e.clientY - down[1]) > 3) return;
      const m = linkedMarkerAt(card.plot, card, e);
      if (m) openNumerics(m.run, m.step, m.stepLast);
    });
  }

  // Drag-select zooms; the range is re-fetched at full resolution.
  async function onSelect(u, card) {
    const sel = u.select;
    if (sel.width < 4) return;
    const min = u.posToVal(sel.left, 'x'), max = u.posToVal(sel.left + sel.width, 'x');
    u.setSelect({ left: 0, top: 0, width: 0, height: 0 }, false);
    card.zoom = { min, max };
    const zoomData = new Map();
    await pooled(card.parts().map(({ run, s, x }) => async () => {
      // Steps covering [min, max] in this run's x values.
      let lo = -1, hi = -1;
      for (let i = 0; i < x.length; i++) {
        if (x[i] >= min && lo < 0) lo = i;
        if (x[i] <= max) hi = i;
      }
      if (lo < 0 || hi < 0) return;
      const full = cache.get(key(run, card.tag));
      if (!full.downsampled) return;
      const minStep = s.step[Math.max(0, lo - 1)], maxStep = s.step[Math.min(s.step.length - 1, hi + 1)];
      zoomData.set(run, await fetchFull(run, card.tag, { min_step: minStep, max_step: maxStep, points: 2 * POINTS }));
    }), 4);
    if (card.zoom?.min !== min) return;
    card.zoomData = zoomData.size ? zoomData : null;
    card.draw();
  }

  async function exportCard(tag, format) {
    const runs = wanted().runs.filter((r) => cache.has(key(r, tag)));
    const all = await pooled(runs.map((run) => async () => [run,
      await getJSON('scalars/series', { run, tag, points: 10000 })]), 4);
    const base = safeFileName(`scalars_${tag}`);
    if (format === 'json') {
      const obj = Object.fromEntries(all.map(([run, r]) => [run, {
        downsampled: r.downsampled, step: r.step, wall_time: r.wall, value: r.value }]));
      download(`${base}.json`, JSON.stringify({ tag, runs: obj }, null, 1), 'application/json');
    } else {
      const lines = ['run,step,wall_time,value'];
      const q = (s) => (/[",\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s);
      for (const [run, r] of all) for (let i = 0; i < r.step.length; i++) lines.push(`${q(run)},${r.step[i]},${r.wall[i]},${r.value[i]}`);
      download(`${base}.csv`, `${lines.join('\n')}\n`, 'text/csv');
    }
  }

  return {
    controls, view,
    async refresh() { await loadTags(); await layout(); },
    onRuns() { layout().catch(() => {}); },
    async onData() {
      await loadTags();
      const before = [...cards.keys()].join('\n');
      const { tags } = wanted();
      if (tags.join('\n') !== before) await layout();
      const touched = await ensureLoaded(true);
      for (const t of touched) cards.get(t)?.draw();
    },
    destroy() { destroyed = true; onScreen.disconnect(); for (const c of cards.values()) c.destroy(); cards.clear(); },
  };
}
