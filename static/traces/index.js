// The Traces dashboard: for one run, every traced function — its calls,
// cache hits, traces and time spent tracing, and the excessive-retracing
// warning when it was raised — then a timeline of its traces and each
// trace with its reason in the terminal's words, its signature, its call
// site and a link to its graph; and the table of its concrete signatures.
// A signature shows its inputs and outputs; the variables it captures fold
// into "captures N variables", opened on a click. The header and the
// table count concrete functions alike: cached now, and traced in all
// (reduce_retracing and freed variables drop some). The page opens on the
// first run that has traces. Live: refetched when the store changes.

import { getJSON } from '../core/api.js';
import { counted, fmtWall, h } from '../core/dom.js';
import { timeline } from './timeline.js';
import './traces.css';

export const name = 'traces';

// Survives tab switches; picked: the person chose the run (else the page
// keeps choosing the first run with traces, as traces arrive).
const state = { run: null, picked: false };

const ms = (us) => (us === null || us === undefined ? '–' : `${(us / 1000).toFixed(2)} ms`);

// The Graphs page's link to a trace's graph.
export const graphLink = (run, trace) => `#graphs?run=${encodeURIComponent(run)}&trace=${trace}`;

// "f(x: float32[3]) captures a, b -> (float32[3])" as its call and its
// captures (the engine's signature text, graph_text.c).
export function splitSignature(sig) {
  const arrow = sig.lastIndexOf(' -> (');
  const at = sig.indexOf(') captures ');
  if (arrow < 0 || at < 0 || at > arrow) return { call: sig, captures: [] };
  return { call: sig.slice(0, at + 1) + sig.slice(arrow),
    captures: sig.slice(at + ') captures '.length, arrow).split(', ') };
}

// A signature: inputs and outputs, the captures folded.
function signatureCell(sig) {
  const { call, captures } = splitSignature(sig);
  if (!captures.length) return h('code', null, sig);
  return h('div.signature', null, h('code', null, call),
    h('details.captures', null, h('summary', null, `captures ${counted(captures.length, 'variable')}`),
      h('ul.capture-list', null, ...captures.map((c) => h('li', null, h('code', null, c))))));
}

// Concrete functions: cached now (the engine's count) and traced in all.
function concreteCounts(f, rows) {
  const traced = new Set(rows.map((t) => t.concrete_id ?? `trace ${t.id}`)).size;
  return { cached: f.calls ? f.concrete : traced, traced };
}
const concreteText = ({ cached, traced }) => (cached === traced ? `${counted(traced, 'concrete function')}`
  : `${cached} concrete cached of ${traced} traced`);

function counters(f, rows) {
  const concrete = concreteCounts(f, rows);
  const hitRate = f.calls ? ` (${Math.round((100 * f.cache_hits) / f.calls)}%)` : '';
  return h('div.trace-counters', null,
    h('span', null, h('b', null, String(f.calls)), f.calls === 1 ? ' call' : ' calls'),
    h('span', null, h('b', null, String(f.cache_hits)), ` cache hits${hitRate}`),
    h('span', null, h('b', null, String(f.traces)), ` ${f.traces === 1 ? 'trace' : 'traces'}`),
    h('span', null, h('b', null, `${f.trace_ms.toFixed(2)} ms`), ' tracing'),
    h('span.trace-concrete', null, concreteText(concrete)));
}

// The warning, with the trace (its row number) that raised it.
function warning(f, traces) {
  if (!f.warnings) return null;
  const i = traces.findIndex((t) => t.warning);
  return h('div.trace-warning', { role: 'alert' },
    h('b', null, `Excessive retracing: ${counted(f.warnings, 'warning')}. `),
    i >= 0 ? `Raised by trace ${i + 1}: ${traces[i].reason}` : '');
}

function traceRow(run, t, i) {
  return h('tr.trace-row', { 'data-id': t.id, id: `trace-${t.id}`, className: `trace-row${t.warning ? ' warned' : ''}` },
    h('td.num', null, String(i + 1)),
    h('td', null, h('span', { className: `trace-kind ${t.is_retrace ? 'retrace' : 'first'}` }, t.is_retrace ? 'retrace' : 'first'),
      h('div.muted', { title: fmtWall(t.wall) }, new Date(t.wall * 1000).toLocaleTimeString(undefined, { hour12: false }))),
    h('td.trace-reason', null, t.reason, t.warning ? h('div.trace-warned', null, 'raised the retracing warning') : null),
    h('td', null, signatureCell(t.signature), h('div.muted', null, t.call_site || '')),
    h('td.num', null, ms(t.duration_us), h('div.muted', null, `${t.nodes_before} → ${t.nodes_after} nodes`)),
    h('td', null, h('a.graph-link', { href: graphLink(run, t.id) }, 'graph')));
}

function traceTable(run, traces) {
  return h('table.trace-table', null,
    h('thead', null, h('tr', null, ...['#', 'when', 'reason', 'signature · call site', 'cost', ''].map((c) => h('th', null, c)))),
    h('tbody', null, ...traces.map((t, i) => traceRow(run, t, i))));
}

// Each concrete function once: its newest trace's signature.
function signatureTable(traces) {
  const byConcrete = new Map();
  for (const t of traces) byConcrete.set(t.concrete_id ?? `trace ${t.id}`, t);
  return h('table.signature-table', null,
    h('thead', null, h('tr', null, h('th', null, 'concrete'), h('th', null, 'signature'))),
    h('tbody', null, ...[...byConcrete].map(([id, t]) => h('tr', null, h('td.num', null, String(id)), h('td', null, signatureCell(t.signature))))));
}

function functionCard(run, f, traces) {
  const rows = traces.filter((t) => t.function === f.function);
  return h('section.card.wide.trace-card', { 'data-function': f.function, 'data-warnings': f.warnings },
    h('div.card-head', null, h('div.card-title', null, f.function), counters(f, rows)),
    warning(f, rows),
    timeline(rows, (t) => document.getElementById(`trace-${t.id}`)?.scrollIntoView({ block: 'center' })),
    traceTable(run, rows),
    h('details.signatures', null, h('summary', null, `Concrete signatures: ${concreteText(concreteCounts(f, rows))}`),
      signatureTable(rows)));
}

export function createPage(ctx) {
  let destroyed = false;
  let token = 0;
  const runSelect = h('select.filter', { id: 'traces-run', 'aria-label': 'Run',
    onchange: () => { state.run = runSelect.value; state.picked = true; reload().catch(() => {}); } });
  const controls = h('div', null, h('div.section-title', null, 'Run'), runSelect);
  const summary = h('span.muted');
  const body = h('div.trace-body');
  const view = h('div.page.traces-page', null, h('div.toolbar', null, summary), body);

  // The run shown: the one picked, else the first selected run with traces.
  function pickRun(runs, traced) {
    if (!runs.includes(state.run)) state.picked = false;
    if (!state.picked) state.run = runs.find((r) => traced.includes(r)) ?? runs[0] ?? null;
    const sig = JSON.stringify([runs, state.run]);
    if (sig === runSelect.dataset.sig) return;
    runSelect.dataset.sig = sig;
    runSelect.replaceChildren(...runs.map((r) => h('option', { value: r, selected: r === state.run }, r)));
  }

  function render(run, fns, traces) {
    const warned = fns.filter((f) => f.warnings).length;
    summary.textContent = `${counted(fns.length, 'function')} · ${counted(traces.length, 'trace')} in ${run}` +
      (warned ? ` · ${warned} with the retracing warning` : '');
    body.replaceChildren(...(fns.length ? fns.map((f) => functionCard(run, f, traces))
      : [h('div.empty', null, h('h2', null, 'No traced functions'),
        h('p', null, `Run ${run} traced no gb_function while a default summary writer was set.`))]));
    view.dataset.run = run;
    view.dataset.functions = String(fns.length);
    view.dataset.traces = String(traces.length);
  }

  async function reload() {
    const mine = ++token;
    const runs = ctx.runs.selected();
    const traced = state.picked && runs.includes(state.run) ? []
      : (await getJSON('traces/runs').catch(() => ({ runs: [] }))).runs;
    if (mine !== token || destroyed) return;
    pickRun(runs, traced);
    const run = state.run;
    if (run) {
      const [f, l] = await Promise.all([
        getJSON('traces/functions', { run }).catch(() => ({ functions: [] })),
        getJSON('traces/list', { run, limit: 5000 }).catch(() => ({ traces: [] })),
      ]);
      if (mine !== token || destroyed) return;
      render(run, f.functions, l.traces);
    } else {
      body.replaceChildren(h('div.empty', null, h('h2', null, 'No run selected')));
    }
    view.dataset.loaded = 'true';
  }

  return {
    controls, view,
    refresh: reload,
    onData: reload,
    onRuns() { reload().catch(() => {}); },
    destroy() { destroyed = true; },
  };
}
