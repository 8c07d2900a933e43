// The Profile dashboard: where each step's time and memory go, for one
// profiler capture of one run.
//   Overview  the sentence that says what bounds the steps, and each step
//             split into input wait, forward, backward, optimizer,
//             communication and other, stacked over the steps (uPlot)
//   Ops       by type or by name: calls, total and self time, share, mean,
//             FLOP/s against the GEMM speed measured at the capture's
//             start; sortable, filterable, a name linking to its node on
//             the Graphs page
//   Trace     every thread's timeline (trace.js, its data in a worker)
//   Memory    each thread's live bytes after each op, the peak marked, and
//             the largest allocations of its step up to the peak
// The page opens on the newest capture of the first run that has one.

import { getJSON } from '../core/api.js';
import { alpha, autosize, uPlot, yAxis } from '../core/chart.js';
import { counted, fillSelect, h, regexFrom } from '../core/dom.js';
import { traceViewer } from './trace.js';
import './profile.css';

export const name = 'profile';

const VIEWS = ['overview', 'ops', 'trace', 'memory'];
const state = { run: null, picked: false, profile: null, view: 'overview', by: 'type',
  sort: 'self_us', desc: true, filter: '' };

const PARTS = [
  ['input_us', 'input wait', '#e53935'], ['forward_us', 'forward', '#1e88e5'],
  ['backward_us', 'backward', '#43a047'], ['optimizer_us', 'optimizer', '#8e24aa'],
  ['comm_us', 'communication', '#6d4c41'], ['other_us', 'other', '#b0bec5'],
];

const ms = (us) => `${(us / 1000).toFixed(us < 1000 ? 3 : 2)} ms`;
const pct = (x) => `${(100 * x).toFixed(1)} %`;
const bytes = (b) => (b >= 1 << 20 ? `${(b / (1 << 20)).toFixed(2)} MiB` : b >= 1024 ? `${(b / 1024).toFixed(1)} KiB` : `${b} B`);
const flopRate = (f) => (f === null ? '–' : f >= 1e9 ? `${(f / 1e9).toFixed(2)} GFLOP/s` : `${(f / 1e6).toFixed(1)} MFLOP/s`);

// ---- Overview ----------------------------------------------------------------------

function stackedChart(host, steps) {
  const xs = steps.map((s) => s.step);
  // cumulative tops, drawn from the highest down so each part shows
  const tops = [];
  let acc = steps.map(() => 0);
  for (const [key] of PARTS) {
    acc = acc.map((a, i) => a + steps[i][key] / 1000);
    tops.push(acc);
  }
  const bars = uPlot.paths.bars({ size: [0.7, 60] });
  const series = [{ label: 'step' }];
  const data = [xs];
  for (let p = PARTS.length - 1; p >= 0; p--) {
    const [key, label, colour] = PARTS[p];
    series.push({ label, fill: alpha(colour, 0.9), stroke: colour, width: 0, paths: bars, points: { show: false },
      value: (u, v, si, i) => (i === null || i === undefined ? '' : ms(steps[i][key])) });
    data.push(tops[p]);
  }
  const width = Math.max(300, host.clientWidth || 800);
  // bars stand on 0: a range fitted to the data would hide most of each part
  const u = new uPlot({ width, height: 260, series,
    scales: { x: { time: false }, y: { range: (u2, min, max) => [0, max > 0 ? max * 1.05 : 1] } },
    axes: [{ label: 'step', stroke: '#3c4043', grid: { show: false } }, yAxis({ label: 'ms' })],
    legend: { live: true } }, data, host);
  return autosize(u, host, 260);
}

function overviewView(run, profile, o) {
  const box = h('div.profile-overview');
  const total = o.steps.reduce((a, s) => a + s.step_us, 0);
  const sums = Object.fromEntries(PARTS.map(([k]) => [k, o.steps.reduce((a, s) => a + s[k], 0)]));
  box.append(h('div.profile-bound', { 'data-bound': o.bound }, o.sentence),
    h('div.profile-parts', null, h('span', null, `${counted(o.steps.length, 'step')}, mean ${ms(total / Math.max(1, o.steps.length))}`),
      ...PARTS.map(([k, label, colour]) => h('span.profile-part', null, h('i', { style: { background: colour } }),
        `${label} ${total ? pct(sums[k] / total) : '–'}`))));
  const chart = h('div.profile-chart');
  box.append(chart);
  let stop = null;
  requestAnimationFrame(() => { if (o.steps.length) stop = stackedChart(chart, o.steps); });
  box.cleanup = () => stop?.();
  return box;
}

// ---- Ops ---------------------------------------------------------------------------

const COLUMNS = [
  ['key', 'op'], ['calls', 'calls'], ['total_us', 'total'], ['self_us', 'self'], ['share', 'share'],
  ['mean_us', 'mean'], ['flops_per_s', 'FLOP/s'], ['peak', 'of GEMM peak'],
];

function opsView(run, ops, rerender) {
  const peak = ops.gemm_peak_flops;
  const rows = ops.ops.map((o) => ({ ...o, peak: o.flops_per_s && peak ? o.flops_per_s / peak : null }));
  const re = state.filter ? regexFrom({ value: state.filter, classList: { add() {}, remove() {} } }) : null;
  const shown = rows.filter((o) => !re || re.test(o.key) || re.test(o.op_type));
  const key = state.sort, sign = state.desc ? -1 : 1;
  shown.sort((a, b) => {
    const x = a[key] ?? -Infinity, y = b[key] ?? -Infinity;
    return (typeof x === 'string' ? x.localeCompare(y) : x - y) * sign;
  });
  const byButtons = ['type', 'name'].map((b) => h('button.profile-by', {
    className: `profile-by${state.by === b ? ' active' : ''}`, 'data-by': b,
    onclick: () => { state.by = b; rerender(); } }, `by ${b}`));
  const filter = h('input.filter.profile-filter', { placeholder: 'filter ops (regex)', value: state.filter,
    'aria-label': 'Filter ops',
    oninput: (e) => { state.filter = e.target.value; rerender({ keepFocus: true }); } });
  const head = h('tr', null, ...COLUMNS.map(([k, label]) => h('th', {
    className: `sortable${state.sort === k ? (state.desc ? ' desc' : ' asc') : ''}`, 'data-sort': k,
    onclick: () => { state.desc = state.sort === k ? !state.desc : k !== 'key'; state.sort = k; rerender(); } }, label)));
  const cell = (o) => {
    if (state.by === 'name' && o.function) {
      const href = `#graphs?run=${encodeURIComponent(run)}&function=${encodeURIComponent(o.function)}&node=${encodeURIComponent(o.key)}`;
      return h('td', null, h('a.profile-node', { href, title: `${o.op_type} in ${o.function}` }, o.key),
        h('div.muted', null, o.op_type));
    }
    return h('td', null, o.key, state.by === 'name' ? h('div.muted', null, o.op_type) : null);
  };
  const body = shown.map((o) => h('tr.profile-op', { 'data-key': o.key }, cell(o),
    h('td.num', null, String(o.calls)), h('td.num', null, ms(o.total_us)), h('td.num', null, ms(o.self_us)),
    h('td.num', null, h('span.share-bar', { style: { width: `${Math.round(60 * o.share)}px` } }), pct(o.share)),
    h('td.num', null, ms(o.mean_us)), h('td.num', null, flopRate(o.flops_per_s)),
    h('td.num', null, o.peak === null ? '–' : pct(o.peak))));
  return h('div.profile-ops', null,
    h('div.toolbar', null, ...byButtons, filter,
      h('span.muted', null, `${shown.length} of ${rows.length} · all ops' self time ${ms(ops.self_us)} · GEMM peak ${flopRate(peak || null)}`)),
    h('table.profile-table', null, h('thead', null, head), h('tbody', null, ...body)));
}

// ---- Memory --------------------------------------------------------------------------

function memoryView(m) {
  const box = h('div.profile-memory');
  if (!m.peak) return h('div.empty', null, 'No op ran in this capture.');
  const series = m.threads.filter((t) => t.t.length);
  box.append(h('div.profile-bound', null,
    `Peak ${bytes(m.peak.bytes)} on ${m.threads[m.peak.thread]?.name ?? 'a thread'} at ${ms(m.peak.t)}` +
    (m.peak.step === null ? '' : ` (step ${m.peak.step})`)));
  const chart = h('div.profile-chart');
  box.append(chart);
  const palette = ['#1e88e5', '#fb8c00', '#43a047', '#8e24aa', '#00897b'];
  let stop = null;
  requestAnimationFrame(() => {
    // one x axis for every thread: each thread's points at their own times
    const xs = [...new Set(series.flatMap((s) => s.t))].sort((a, b) => a - b);
    const at = new Map(xs.map((x, i) => [x, i]));
    const data = [xs.map((x) => x / 1000)];
    for (const s of series) {
      const col = new Array(xs.length).fill(null);
      s.t.forEach((t, i) => { col[at.get(t)] = s.bytes[i] / (1 << 20); });
      data.push(col);
    }
    const peakX = m.peak.t / 1000, peakY = m.peak.bytes / (1 << 20);
    const u = new uPlot({ width: Math.max(300, chart.clientWidth || 800), height: 240,
      scales: { x: { time: false } },
      series: [{ label: 'ms' }, ...series.map((s, i) => ({ label: s.name, stroke: palette[i % palette.length], width: 1.5,
        spanGaps: true, points: { show: false } }))],
      axes: [{ label: 'ms since the capture began', stroke: '#3c4043' }, yAxis({ label: 'MiB live' })],
      hooks: { draw: [(u2) => {
        const x = u2.valToPos(peakX, 'x', true), y = u2.valToPos(peakY, 'y', true);
        const c = u2.ctx;
        c.save();
        c.fillStyle = '#d32f2f';
        c.beginPath();
        c.arc(x, y, 5 * devicePixelRatio, 0, 2 * Math.PI);
        c.fill();
        c.font = `${11 * devicePixelRatio}px system-ui`;
        c.fillText(`peak ${bytes(m.peak.bytes)}`, x + 8 * devicePixelRatio, y - 6 * devicePixelRatio);
        c.restore();
      }] } }, data, chart);
    stop = autosize(u, chart, 240);
  });
  box.append(h('h3', null, 'Largest allocations of that step up to the peak'),
    h('table.profile-table.profile-at-peak', null,
      h('thead', null, h('tr', null, ...['op', 'type', 'input shapes', 'bytes out', 'at'].map((c) => h('th', null, c)))),
      h('tbody', null, ...m.at_peak.map((a) => h('tr', null, h('td', null, a.name), h('td', null, a.op_type),
        h('td', null, h('code', null, a.shapes)), h('td.num', null, bytes(a.bytes)), h('td.num', null, ms(a.t)))))));
  box.cleanup = () => stop?.();
  return box;
}

// ---- the page ------------------------------------------------------------------------

export function createPage(ctx) {
  let destroyed = false, token = 0, viewer = null, shown = null;
  const runSelect = h('select.filter', { id: 'profile-run', 'aria-label': 'Run',
    onchange: () => { state.run = runSelect.value; state.picked = true; state.profile = null; reload().catch(() => {}); } });
  const profileSelect = h('select.filter', { id: 'profile-capture', 'aria-label': 'Capture',
    onchange: () => { state.profile = Number(profileSelect.value); reload().catch(() => {}); } });
  const controls = h('div', null, h('div.section-title', null, 'Run'), runSelect,
    h('div.section-title', null, 'Capture'), profileSelect);
  const tabs = h('div.profile-tabs', { role: 'tablist' });
  const body = h('div.profile-body');
  const traceHost = h('div.profile-trace');
  const view = h('div.page.profile-page', null, tabs, body);

  function tabBar() {
    tabs.replaceChildren(...VIEWS.map((v) => h('button.profile-tab', {
      className: `profile-tab${state.view === v ? ' active' : ''}`, role: 'tab', 'data-view': v,
      onclick: () => { state.view = v; reload().catch(() => {}); } }, v[0].toUpperCase() + v.slice(1))));
  }

  function replaceBody(node) {
    shown?.cleanup?.();
    shown = node;
    body.replaceChildren(node);
  }

  function failed(e) {
    replaceBody(h('div.empty', null, h('h2', null, 'Could not load the profile'), h('p', null, String(e.message ?? e))));
    view.dataset.loaded = 'true';
  }

  async function reload(opts = {}) {
    try { await show(opts); } catch (e) { failed(e); }
  }

  async function show(opts) {
    const mine = ++token;
    tabBar();
    const runs = ctx.runs.selected();
    const profiled = (await getJSON('profile/runs').catch(() => ({ runs: [] }))).runs;
    if (mine !== token || destroyed) return;
    if (!profiled.includes(state.run) || !state.picked) state.run = profiled.find((r) => runs.includes(r)) ?? profiled[0] ?? null;
    fillSelect(runSelect, profiled, state.run);
    if (!state.run) {
      replaceBody(h('div.empty', null, h('h2', null, 'No profile'),
        h('p', null, 'Profile steps with gb_profiler_start (or gb_summary_trace_on(w, true)) while a default writer is set.')));
      view.dataset.loaded = 'true';
      return;
    }
    const run = state.run;
    const list = (await getJSON('profile/list', { run })).profiles;
    if (mine !== token || destroyed) return;
    if (!list.some((p) => p.id === state.profile)) state.profile = list.at(-1)?.id ?? null;
    fillSelect(profileSelect, list.map((p) => p.id), state.profile, (id) => {
      const p = list.find((q) => q.id === id);
      return `#${id} · ${ms(p.duration_us)} · ${p.records.toLocaleString()} events${p.rank ? ` · rank ${p.rank}` : ''}`;
    });
    const profile = state.profile;
    view.dataset.run = run;
    view.dataset.profile = String(profile);
    view.dataset.view = state.view;
    if (state.view === 'trace') {
      if (shown !== traceHost) {
        replaceBody(traceHost);
        viewer?.destroy();
        viewer = traceViewer(traceHost);
        viewer.load(run, profile);
        traceHost.dataset.key = `${run}/${profile}`;
      } else if (traceHost.dataset.key !== `${run}/${profile}`) {
        viewer.load(run, profile);
        traceHost.dataset.key = `${run}/${profile}`;
      }
    } else {
      viewer?.destroy();
      viewer = null;
      if (state.view === 'overview') {
        const o = await getJSON('profile/overview', { run, profile });
        if (mine !== token || destroyed) return;
        replaceBody(overviewView(run, profile, o));
      } else if (state.view === 'ops') {
        const o = await getJSON('profile/ops', { run, profile, by: state.by });
        if (mine !== token || destroyed) return;
        const focused = opts.keepFocus && document.activeElement?.classList.contains('profile-filter');
        const caret = focused ? document.activeElement.selectionStart : 0;
        replaceBody(opsView(run, o, (o2) => reload(o2).catch(() => {})));
        if (focused) {
          const f = body.querySelector('.profile-filter');
          f.focus();
          f.setSelectionRange(caret, caret);
        }
      } else {
        const m = await getJSON('profile/memory', { run, profile });
        if (mine !== token || destroyed) return;
        replaceBody(memoryView(m));
      }
    }
    view.dataset.loaded = 'true';
  }

  const page = {
    controls, view,
    refresh: reload,
    onData: () => (state.view === 'trace' ? Promise.resolve() : reload()),
    onRuns() { reload().catch(() => {}); },
    destroy() { destroyed = true; shown?.cleanup?.(); viewer?.destroy(); },
    // the benchmark's handle: a viewer of n made-up slices
    benchTrace(n, threads) {
      state.view = 'trace';
      replaceBody(traceHost);
      viewer?.destroy();
      viewer = traceViewer(traceHost);
      viewer.synthesize(n, threads);
    },
  };
  window.__profileBench = (n, threads) => page.benchTrace(n, threads);
  return page;
}
