// numerics-link.js — how other pages point at the Numerics page: which
// runs have numerics alerts, and links that open the page filtered to a run
// (and a step). In core/ because two dashboards use it: the Numerics page
// itself and the Scalars page (legend links, NaN/Inf markers).
//
// The filter travels in the URL's query (`?run=R&step=S#numerics`), so a
// link can be opened in a new tab or bookmarked; in the same tab it is set
// without a reload and the hash change switches the page.

import { getJSON } from './api.js';
import { counted, h } from './dom.js';
import './numerics-link.css';

// Map run -> {count, first_step, last_step, first: {step, op_type, op_name}}
// for every run with at least one alert.
export async function alertRuns() {
  const r = await getJSON('numerics/runs');
  return new Map(r.runs.map((x) => [x.run, x]));
}

// The page at run, filtered to a step or to steps step..stepLast.
export function numericsHref(run, step, stepLast = step) {
  const q = new URLSearchParams({ run });
  if (step !== undefined && step !== null) {
    if (stepLast === step) q.set('step', String(step));
    else { q.set('min_step', String(step)); q.set('max_step', String(stepLast)); }
  }
  return `?${q}#numerics`;
}

export function openNumerics(run, step, stepLast = step) {
  const href = numericsHref(run, step, stepLast);
  history.replaceState(history.state, '', `${location.pathname}${href.slice(0, href.indexOf('#'))}${location.hash}`);
  location.hash = 'numerics';
}

// "⚠ 12 numerics alerts" for a run's entry, or null when it has none.
export function alertLink(run, info) {
  if (!info) return null;
  const first = info.first;
  const where = first.step === null ? '' : ` at step ${first.step}`;
  return h('a.numerics-link', {
    href: numericsHref(run),
    title: `First NaN/Inf${where}: ${first.op_type} (${first.op_name}). Open the Numerics page.`,
    'data-run': run,
    onclick: (e) => {
      if (e.button !== 0 || e.ctrlKey || e.metaKey || e.shiftKey) return;
      e.preventDefault();
      openNumerics(run);
    },
  }, `⚠ ${counted(info.count, 'numerics alert')}`);
}
