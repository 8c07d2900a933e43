// The Numerics dashboard: the NaN/Inf alerts of the engine's numerics
// checks for one run, the first one first. A card at the top names the op
// that made the first NaN/Inf — whether it created it or received it, in
// the forward or backward pass, and what its inputs held — then a compact
// table lists every alert by first occurrence (step, then the order they
// were recorded); a row opens to show its details. Filters: run, op type,
// steps (links from other pages set them through the URL, see
// core/numerics-link.js).
// Live: new alerts are merged in as they are written.

import { getJSON } from '../core/api.js';
import { counted, fmtValue, fmtWall, h, num } from '../core/dom.js';
import { alertRuns } from '../core/numerics-link.js';
import './numerics.css';

export const name = 'numerics';

const PAGE_ROWS = 200;   // rows shown at first and added by "Show more"

// Filters survive tab switches; a link's URL query overrides them.
const filters = { run: null, opType: '', minStep: '', maxStep: '' };

export function createPage(ctx) {
  // A run a link asked for is offered even if unselected, until the
  // selection changes.
  let pinned = takeUrlFilters() ? filters.run : null;
  let runsInfo = new Map();        // run -> /api/numerics/runs entry
  let data = null;                 // the last /alerts answer, alerts merged
  let shown = PAGE_ROWS;
  let token = 0;                   // bumps when filters change: late answers are dropped
  let destroyed = false;
  const expanded = new Set();      // alert ids whose details are open

  // ---- controls ----------------------------------------------------------------
  const runSelect = h('select.filter', { id: 'numerics-run', 'aria-label': 'Run',
    onchange: () => { filters.run = runSelect.value; filters.opType = ''; refilter(); } });
  const typeSelect = h('select.filter', { id: 'numerics-op-type', 'aria-label': 'Op type',
    onchange: () => { filters.opType = typeSelect.value; refilter(); } });
  const stepInput = (key, placeholder) => h('input.filter', { type: 'number', placeholder, id: `numerics-${key}`,
    value: filters[key], step: 1, oninput: (e) => { filters[key] = e.target.value.trim(); reloadSoon(); } });
  const minInput = stepInput('minStep', 'from'), maxInput = stepInput('maxStep', 'to');
  const controls = h('div', null,
    h('div.section-title', null, 'Run'), runSelect,
    h('div.section-title', null, 'Op type'), typeSelect,
    h('div.section-title', null, 'Steps'), h('div.step-range', null, minInput, h('span.muted', null, '–'), maxInput));

  const summary = h('span.muted.numerics-summary');
  const chips = h('span.filter-chips');
  const firstBox = h('div.numerics-first-box');
  const tableBox = h('div.numerics-table-box');
  const capped = h('div.numerics-capped', { id: 'numerics-capped', hidden: true });
  const view = h('div.page.numerics-page', null, h('div.toolbar', null, summary, chips), capped, firstBox, tableBox);

  // ---- data ----------------------------------------------------------------------
  function params(extra = {}) {
    const p = { run: filters.run, limit: shown, ...extra };
    if (filters.opType) p.op_type = filters.opType;
    if (/^-?\d+$/.test(filters.minStep)) p.min_step = filters.minStep;
    if (/^-?\d+$/.test(filters.maxStep)) p.max_step = filters.maxStep;
    return p;
  }

  // The runs to offer: those with alerts among the selected ones (and the
  // run a link asked for).
  function runChoices() {
    const selected = new Set(ctx.runs.selected());
    return [...runsInfo.keys()].filter((r) => selected.has(r) || r === pinned).sort();
  }

  async function loadRuns() {
    runsInfo = await alertRuns();
    const choices = runChoices();
    if (!choices.includes(filters.run)) filters.run = choices[0] ?? null;
    // Rebuilt only when it changes: a live update must not close an open list.
    const labels = choices.map((r) => `${r} (${runsInfo.get(r).count})`);
    const sig = JSON.stringify([labels, filters.run]);
    if (sig === runSelect.dataset.sig) return;
    runSelect.dataset.sig = sig;
    runSelect.replaceChildren(...choices.map((r, i) => h('option', { value: r, selected: r === filters.run }, labels[i])));
    runSelect.disabled = !choices.length;
  }

  // New filters start again from the first rows.
  function refilter() {
    shown = PAGE_ROWS;
    reload().catch(() => {});
  }

  async function reload() {
    const mine = ++token;
    syncUrl();
    if (!filters.run) { data = null; render(); return; }
    const r = await getJSON('numerics/alerts', params());
    if (mine !== token || destroyed) return;
    data = r;
    render();
  }

  let reloadTimer = null;
  function reloadSoon() {
    clearTimeout(reloadTimer);
    reloadTimer = setTimeout(refilter, 300);
  }

  // Live: only alerts recorded after the last one held, merged into place.
  async function update() {
    if (!filters.run || data?.run !== filters.run) return reload();
    const mine = token;
    const r = await getJSON('numerics/alerts', params({ after_id: data.last_id }));
    if (mine !== token || destroyed) return;
    if (r.last_id === data.last_id && r.total === data.total) return;
    if (r.total < data.total) return reload();   // not the same run any more
    r.alerts = mergeAlerts(data.alerts, r.alerts).slice(0, shown);
    data = r;
    render();
  }

  function syncUrl() {
    const q = new URLSearchParams();
    if (filters.run) q.set('run', filters.run);
    if (filters.opType) q.set('op_type', filters.opType);
    if (filters.minStep && filters.minStep === filters.maxStep) q.set('step', filters.minStep);
    else {
      if (filters.minStep) q.set('min_step', filters.minStep);
      if (filters.maxStep) q.set('max_step', filters.maxStep);
    }
    const s = q.toString();
    history.replaceState(history.state, '', `${location.pathname}${s ? `?${s}` : ''}${location.hash}`);
  }

  // ---- drawing -------------------------------------------------------------------
  function render() {
    if (destroyed) return;
    renderTypes();
    // (Not under the user's fingers: "-" is an empty value while typing "-5".)
    for (const [input, v] of [[minInput, filters.minStep], [maxInput, filters.maxStep]]) {
      if (document.activeElement !== input) input.value = v;
    }
    chips.replaceChildren(...filterChips());
    if (!data) {
      summary.textContent = '';
      capped.hidden = true;
      firstBox.replaceChildren();
      tableBox.replaceChildren(h('div.empty', null, h('h2', null, 'No numerics alerts'),
        h('p', null, runsInfo.size
          ? 'None of the selected runs has numerics alerts.'
          : 'Runs that train with the numerics checks on in record mode (gb_enable_check_numerics_mode) list every NaN/Inf here, the first one first.')));
      for (const k of ['run', 'total', 'matched']) delete view.dataset[k];
      view.dataset.alerts = '0';
      view.dataset.loaded = 'true';
      return;
    }
    const filtered = data.matched !== data.total;
    summary.textContent = `${filtered ? `${data.matched} of ` : ''}${counted(data.total, 'alert')}` +
      ` in ${data.run}${data.truncated ? ` (only the first ${data.total} read)` : ''}` +
      (data.first_step !== null ? ` · ${stepSpan(data)}` : '');
    const more = cappedLine(data);
    capped.hidden = !more;
    capped.textContent = more;
    firstBox.replaceChildren(data.first ? firstCard(data.first) : '');
    tableBox.replaceChildren(alertTable());
    view.dataset.run = data.run;
    view.dataset.total = String(data.total);
    view.dataset.matched = String(data.matched);
    view.dataset.alerts = String(data.alerts.length);
    view.dataset.loaded = 'true';
  }

  function renderTypes() {
    const types = data?.op_types ?? [];
    const opts = [h('option', { value: '', selected: !filters.opType }, `All op types${data ? ` (${data.total})` : ''}`)];
    for (const t of types) opts.push(h('option', { value: t.op_type, selected: t.op_type === filters.opType }, `${t.op_type} (${t.count})`));
    // A filter from a link for a type the run does not have stays visible.
    if (filters.opType && !types.some((t) => t.op_type === filters.opType)) {
      opts.push(h('option', { value: filters.opType, selected: true }, `${filters.opType} (0)`));
    }
    const sig = JSON.stringify([opts.map((o) => o.textContent), filters.opType]);
    if (sig === typeSelect.dataset.sig) return;
    typeSelect.dataset.sig = sig;
    typeSelect.replaceChildren(...opts);
    typeSelect.disabled = !data;
  }

  function filterChips() {
    const out = [];
    const chip = (label, clear) => h('span.chip', null, label,
      h('button.chip-x', { type: 'button', title: 'Remove this filter', 'aria-label': `Remove ${label}`, onclick: clear }, '×'));
    if (filters.opType) out.push(chip(`op type ${filters.opType}`, () => { filters.opType = ''; refilter(); }));
    const steps = stepText();
    if (steps) out.push(chip(steps, () => { filters.minStep = filters.maxStep = ''; refilter(); }));
    return out;
  }

  function stepText() {
    const { minStep: lo, maxStep: hi } = filters;
    if (lo && lo === hi) return `step ${lo}`;
    if (lo && hi) return `steps ${lo}–${hi}`;
    if (lo) return `steps ≥ ${lo}`;
    if (hi) return `steps ≤ ${hi}`;
    return '';
  }

  function firstCard(a) {
    const color = ctx.runs.color(data.run);
    return h('section.card.numerics-first', { 'data-id': a.id, 'data-op-name': a.op_name, 'data-step': a.step ?? '' },
      h('div.first-label', null, h('span.swatch', { style: { background: color } }), data.run),
      h('h2.first-title', null, `First NaN/Inf: ${headline(a)}`),
      a.direction === 'backward' && a.forward_op
        ? h('div.first-line', null, `In the backward pass: the gradient of ${a.forward_op_type || 'op'} (${a.forward_op}).`) : null,
      originText(a) ? h('div.first-line', null, originText(a)) : null,
      hint(a) ? h('div.first-hint', null, hint(a)) : null,
      h('div.first-facts', null, facts(a)),
      graphLink(data.run, a),
      a.inputs.length ? inputsTable(a) : null,
      // Without input summaries the engine's one-line report says the most.
      !a.inputs.length && a.message ? h('pre.alert-message', null, a.message) : null);
  }

  function alertTable() {
    const rows = data.alerts;
    if (!rows.length) {
      const span = data.first_step !== null ? ` This run's alerts are at ${stepSpan(data)}.` : '';
      return h('div.card.numerics-none', null, `No alert matches ${[filters.opType && `op type ${filters.opType}`, stepText()].filter(Boolean).join(' and ') || 'the filters'}.${span} `,
        h('button.link', { type: 'button', onclick: () => { filters.opType = ''; filters.minStep = filters.maxStep = ''; refilter(); } }, 'Show all alerts'));
    }
    const head = h('tr', null, ...['#', 'Step', 'Op type', 'Op name', 'Pass', 'NaN', '+Inf', '-Inf', 'Origin', 'Output']
      .map((t, i) => h(i === 0 || (i >= 5 && i <= 7) ? 'th.num' : 'th', null, t)));
    const body = h('tbody');
    rows.forEach((a, i) => {
      const open = expanded.has(a.id);
      const tr = h('tr.alert-row', {
        className: `alert-row${a.id === data.first?.id ? ' first' : ''}${open ? ' open' : ''}`,
        'data-id': a.id, 'data-step': a.step ?? '', 'data-op-name': a.op_name, tabIndex: 0,
        title: 'Show the details of this alert',
        onclick: () => toggle(a.id), onkeydown: (e) => { if (e.key === 'Enter' || e.key === ' ') { e.preventDefault(); toggle(a.id); } },
      },
      h('td.num.muted', null, String(i + 1)),
      h('td.num', null, a.step ?? '–'),
      h('td', null, a.op_type),
      h('td.op-name', { title: a.op_name }, a.op_name),
      h('td', null, a.direction === 'backward' ? h('span.pass.backward', { title: a.forward_op ? `gradient of ${a.forward_op}` : 'backward pass' }, 'backward') : h('span.pass', null, 'forward')),
      countCell(a.nan), countCell(a.posinf), countCell(a.neginf),
      h('td', null, originBadge(a)),
      h('td.muted.mono', null, a.output ? tensorText(a.output) : '–'));
      body.append(tr);
      if (open) body.append(h('tr.alert-detail', { 'data-id': a.id }, h('td', { colSpan: 10 }, details(a))));
    });
    const more = data.window_matched > rows.length;
    return h('section.card.numerics-alerts', null,
      h('div.card-head', null, h('div.card-title', null, 'Alerts, first occurrence first'),
        h('span.card-sub', null, `showing ${rows.length} of ${data.matched}`)),
      h('div.table-scroll', null, h('table.alerts', null, h('thead', null, head), body)),
      more ? h('div.more', null, h('button.small', { type: 'button', id: 'numerics-more',
        onclick: () => { shown += PAGE_ROWS; reload().catch(() => {}); } }, `Show ${Math.min(PAGE_ROWS, data.window_matched - rows.length)} more`)) : null);
  }

  function toggle(id) {
    if (expanded.has(id)) expanded.delete(id); else expanded.add(id);
    tableBox.replaceChildren(alertTable());
    // The keyboard stays on the row it opened.
    tableBox.querySelector(`tr.alert-row[data-id="${id}"]`)?.focus();
  }

  function details(a) {
    return h('div.alert-details', null,
      originText(a) ? h('div.first-line', null, originText(a)) : null,
      hint(a) ? h('div.first-hint', null, hint(a)) : null,
      h('div.first-facts', null, facts(a)),
      graphLink(data.run, a),
      a.inputs.length ? inputsTable(a) : null,
      a.message ? h('pre.alert-message', null, a.message) : null);
  }

  // ---- life cycle -------------------------------------------------------------------
  return {
    controls, view,
    async refresh() { await loadRuns(); await reload(); },
    onRuns() {
      pinned = null;
      loadRuns().then(() => (filters.run !== (data?.run ?? null) ? reload() : null)).catch(() => {});
    },
    async onData() {
      const before = filters.run;
      await loadRuns();
      if (filters.run !== before) await reload(); else await update();
    },
    destroy() {
      destroyed = true;
      clearTimeout(reloadTimer);
      // The filter query belongs to this page only.
      history.replaceState(history.state, '', `${location.pathname}${location.hash}`);
    },
  };
}

// A link's filters (?run=&step=&op_type=&min_step=&max_step=) replace the
// kept ones; returns whether there was one.
function takeUrlFilters() {
  const q = new URLSearchParams(location.search);
  if (!q.has('run')) return false;
  filters.run = q.get('run');
  filters.opType = q.get('op_type') ?? '';
  const step = q.get('step');
  filters.minStep = step ?? q.get('min_step') ?? '';
  filters.maxStep = step ?? q.get('max_step') ?? '';
  return true;
}

// Alerts in first-occurrence order: by step (none first), then id.
function before(a, b) {
  const sa = a.step ?? -Infinity, sb = b.step ?? -Infinity;
  return sa !== sb ? sa < sb : a.id < b.id;
}

function mergeAlerts(held, fresh) {
  const ids = new Set(held.map((a) => a.id));
  const add = fresh.filter((a) => !ids.has(a.id));
  const out = [];
  let i = 0, j = 0;
  while (i < held.length || j < add.length) {
    if (j >= add.length || (i < held.length && before(held[i], add[j]))) out.push(held[i++]);
    else out.push(add[j++]);
  }
  return out;
}

// ---- words --------------------------------------------------------------------------

// "-Inf", "NaN and +Inf": the kinds of bad values an alert counts.
function kinds(a) {
  return [a.nan && 'NaN', a.posinf && '+Inf', a.neginf && '-Inf'].filter(Boolean).join(' and ') || 'NaN/Inf';
}

// For an alert raised inside a traced function: its node on the Graphs
// page, highlighted there as the alert's.
function graphLink(run, a) {
  if (!a.function) return null;
  const q = new URLSearchParams({ run, function: a.function, node: a.op_name, alert: '1' });
  return h('div.first-line', null, h('a.graph-link', { href: `#graphs?${q}`, 'data-node': a.op_name },
    `Show ${a.op_name} in the graph of ${a.function}`));
}

function headline(a) {
  const verb = a.origin === 'created' ? 'created by' : a.origin === 'received' ? 'received by' : 'in';
  return `${kinds(a)} ${verb} ${a.op_type} (${a.op_name})${a.step === null ? '' : ` at step ${a.step}`}`;
}

function originText(a) {
  if (a.origin === 'created') return `Every input was finite: this op made the ${kinds(a)}.`;
  if (a.origin === 'received') return 'An input already held NaN/Inf: this op passed it on. Look at the alerts before it.';
  return null;   // the store does not say
}

function stepSpan(d) {
  return d.first_step === d.last_step ? `step ${d.first_step}` : `steps ${d.first_step}–${d.last_step}`;
}

// When the checks raised more alerts than the store keeps (the limit of
// gb_enable_check_numerics_mode), how many and until when; '' otherwise.
// seen counts every alert, stored or not (the engine's count series).
function cappedLine(d) {
  if (d.seen === null || d.seen === undefined || d.seen <= d.total) return '';
  const more = d.seen - d.total;
  return `The checks raised ${d.seen} alerts; only the first ${d.total} are stored ` +
    `(${more} more ${more === 1 ? 'was' : 'were'} past the limit of gb_enable_check_numerics_mode). ` +
    `The last NaN/Inf was at step ${d.seen_last_step}.`;
}

// Why an op typically makes NaN/Inf, when its inputs show the cause.
function hint(a) {
  if (a.origin !== 'created' || !a.inputs.length) return null;
  const x = a.inputs[0], lo = num(x.min), hi = num(x.max);
  const has = (v) => v !== null && !Number.isNaN(v);
  switch (a.op_type) {
    case 'Log':
      if (has(lo) && lo < 0) return `Its input goes down to ${fmtValue(lo)}: the log of a negative number is NaN.`;
      if (lo === 0) return 'Its input reaches 0, and log(0) = -Inf. Clip the input (e.g. to 1e-7) or compute the loss from logits.';
      return null;
    case 'Sqrt':
      return has(lo) && lo < 0 ? `Its input goes down to ${fmtValue(lo)}: the square root of a negative number is NaN.` : null;
    case 'Rsqrt':
      return lo === 0 ? 'Its input reaches 0, and 1/sqrt(0) = +Inf.' : null;
    case 'Div': {
      const d = a.inputs[1];
      if (!d) return null;
      const dlo = num(d.min), dhi = num(d.max);
      return has(dlo) && dlo <= 0 && dhi >= 0 ? `The divisor ranges over [${fmtValue(dlo)}, ${fmtValue(dhi)}], which holds 0.` : null;
    }
    case 'Exp':
      return has(hi) && hi > 88 ? `Its input reaches ${fmtValue(hi)}: exp overflows float32 above about 88.7.` : null;
    default:
      return null;
  }
}

function tensorText(t) {
  const shape = t.shape ? `[${t.shape.join(',')}]` : '[?]';
  return `${t.dtype ?? '?'} ${shape}`;
}

// A NaN/Inf count: red when there is any; zeros as a dot (compact) or 0.
function countCell(n, zero = '·') {
  return h(n ? 'td.num.bad' : 'td.num.muted', null, n ? String(n) : zero);
}

function originBadge(a) {
  if (!a.origin) return h('span.muted', null, '–');
  return h(`span.origin.${a.origin}`, { title: a.origin === 'created' ? 'every input was finite: this op made the NaN/Inf' : 'an input already held NaN/Inf' }, a.origin);
}

// Label/value pairs: scope, function, output, first bad index, time.
function facts(a) {
  const out = [];
  const fact = (k, v) => out.push(h('span.fact', null, h('span.fact-key', null, k), h('span.fact-value', null, v)));
  fact('counts', [a.nan && `${a.nan} NaN`, a.posinf && `${a.posinf} +Inf`, a.neginf && `${a.neginf} -Inf`].filter(Boolean).join(', ') || '–');
  if (a.output) fact('output', `${a.output.index ?? '?'}: ${tensorText(a.output)}`);
  if (a.first_index !== null) fact('first bad index', String(a.first_index));
  fact('pass', a.direction === 'backward' ? `backward${a.forward_op ? ` (gradient of ${a.forward_op})` : ''}` : 'forward');
  if (a.scope) fact('scope', a.scope);
  if (a.function) fact('function', a.function);
  fact('step', a.step ?? 'none');
  fact('time', fmtWall(a.wall));
  return out;
}

function inputsTable(a) {
  const cell = (v) => {
    const x = num(v);
    return h(Number.isNaN(x) ? 'td.num.muted' : 'td.num', null, Number.isNaN(x) ? 'none finite' : fmtValue(x));
  };
  return h('table.inputs', null,
    h('thead', null, h('tr', null, ...['Input', 'dtype', 'shape', 'min', 'max', 'NaN', 'Inf'].map((t, i) => h(i >= 3 ? 'th.num' : 'th', null, t)))),
    h('tbody', null, a.inputs.map((x, i) => h('tr', null,
      h('td', null, String(i)), h('td.mono', null, x.dtype ?? '?'), h('td.mono', null, x.shape ? `[${x.shape.join(',')}]` : '?'),
      cell(x.min), cell(x.max), countCell(x.nan, '0'), countCell(x.inf, '0')))));
}
