// app.js — the dashboard shell: tabs for the active dashboards, the run
// selector, and the live connection (server-sent events from /api/events).
//
// A dashboard is a module static/<name>/index.js exporting
//   name            its plugin name (the API prefix /api/<name>/)
//   createPage(ctx) -> { controls?, view, refresh(), onData(), onRuns(), destroy() }
// The build bundles every such folder (see webui/CMakeLists.txt); the
// server says which are active for the open store (/api/plugins).
// ctx.runs is the run selector; ctx.generation the store's generation as
// the live stream last announced it: pages stamp what they fetch with it
// and fetch again only once it moved (onData is called when it does).
// A link may carry a page's state after the tab: `#graphs?run=r&node=n`
// (ctx.query() reads it); following one to the page already shown calls
// its onQuery().

import { getJSON } from './api.js';
import { h, throttle } from './dom.js';
import { Runs } from './runs.js';

const $ = (id) => document.getElementById(id);

export async function startApp(pageModules) {
  const modules = new Map(pageModules.map((m) => [m.name, m]));
  const runs = new Runs({ list: $('run-list'), filter: $('run-filter'), count: $('run-count'),
    all: $('runs-all'), none: $('runs-none') });
  const ctx = { runs, generation: 0, query: hashQuery };
  // State the end-to-end tests read (and a handy console handle).
  window.__glassbox = { ctx, ready: false, updates: 0 };

  let plugins = [];
  let current = null;      // {name, page}

  function tabs() {
    const active = plugins.filter((p) => p.active && modules.has(p.name));
    $('tabs').replaceChildren(...active.map((p) => h('a.tab', {
      href: `#${p.name}`, 'data-tab': p.name,
      className: `tab${current?.name === p.name ? ' active' : ''}`,
    }, p.title)));
    return active;
  }

  function show(name) {
    if (current?.name === name) { current.page.onQuery?.(); return; }
    current?.page.destroy?.();
    const page = modules.get(name).createPage(ctx);
    current = { name, page };
    // Which dashboard the shown page is: the hash changes before the old
    // page is replaced, so "loaded" alone could be the previous page's.
    page.view.dataset.tab = name;
    $('page-controls').replaceChildren(...(page.controls ? [page.controls] : []));
    $('main').replaceChildren(page.view);
    tabs();
    page.refresh().catch(reportError);
  }

  function route() {
    const active = tabs();
    if (!active.length) {
      current?.page.destroy?.();
      current = null;
      $('page-controls').replaceChildren();
      $('main').replaceChildren(h('div.empty', null,
        h('h2', null, 'No data yet'),
        h('p', null, 'Nothing has been written to this store yet. Start a training run that writes summaries; this page updates by itself.')));
      return;
    }
    const want = location.hash.slice(1).split('?')[0];
    show(active.some((p) => p.name === want) ? want : active[0].name);
  }

  async function loadMeta() {
    const [p, r] = await Promise.all([getJSON('plugins'), getJSON('runs')]);
    const before = JSON.stringify(plugins.map((x) => [x.name, x.active]));
    plugins = p.plugins;
    const runsChanged = runs.update(r.runs);
    if (before !== JSON.stringify(plugins.map((x) => [x.name, x.active]))) route();
    return runsChanged;
  }

  runs.onChange(() => current?.page.onRuns?.());
  window.addEventListener('hashchange', route);
  trackTopbarHeight();

  // Live: each event means "the store changed"; pages fetch what is new.
  // One update at a time, and one asked for meanwhile runs after it; the
  // first load counts as one, so no update overlaps it.
  let busy = true, again = false;
  const onData = async () => {
    if (busy) { again = true; return; }
    busy = true;
    try {
      do {
        again = false;
        const changed = await loadMeta();
        if (changed) current?.page.onRuns?.();
        await current?.page.onData?.();
        window.__glassbox.updates++;
      } while (again);
    } catch (e) { reportError(e); }
    busy = false;
  };
  await connectLive(ctx, throttle(onData, 250));

  await loadMeta();
  if (!current) route();
  window.__glassbox.ready = true;
  busy = false;
  if (again) onData();
}

// The stream opens before anything is fetched, and its first message (the
// store's generation now) is awaited, briefly: what the pages fetch next is
// at least that new, so only a later generation asks them to fetch again —
// a page's first fetch is never repeated at once. Resolves when the first
// message came, or after a second without one (then that first message,
// when it comes, counts as a change: nothing is missed either way).
function connectLive(ctx, onData) {
  const badge = $('live');
  const es = new EventSource('/api/events');
  let starting = true, started;
  const first = new Promise((resolve) => { started = resolve; });
  es.onopen = () => { badge.textContent = 'live'; badge.className = 'live on'; };
  es.onerror = () => { badge.textContent = 'reconnecting…'; badge.className = 'live off'; };
  es.onmessage = (ev) => {
    const g = JSON.parse(ev.data).generation;
    if (g === ctx.generation) return;
    ctx.generation = g;
    if (starting) started();
    else onData();
  };
  window.addEventListener('beforeunload', () => es.close());
  return Promise.race([first, new Promise((resolve) => { setTimeout(resolve, 1000); })])
    .then(() => { starting = false; });
}

// The tabs wrap to more rows when they do not fit; what sits under the
// sticky top bar (the sidebar, full-height pages) reads its height from
// --topbar-h, kept equal to the bar's as it changes.
function trackTopbarHeight() {
  const bar = document.querySelector('.topbar');
  new ResizeObserver(() => {
    document.documentElement.style.setProperty('--topbar-h', `${bar.offsetHeight}px`);
  }).observe(bar);
}

// The page state a link carried after the tab's name (`#graphs?run=r`).
function hashQuery() {
  const i = location.hash.indexOf('?');
  return new URLSearchParams(i < 0 ? '' : location.hash.slice(i + 1));
}

function reportError(e) {
  // Shown, not thrown: the page keeps working when one request fails.
  const bar = document.getElementById('error-bar') ||
    document.body.appendChild(h('div.error-bar', { id: 'error-bar' }));
  bar.textContent = `Error: ${e.message}`;
  clearTimeout(reportError.timer);
  reportError.timer = setTimeout(() => bar.remove(), 6000);
}
