// trace.js — the trace viewer: a timeline of every recorded thread.
//
// One canvas; a track per thread (its name at the left), a row per
// nesting depth, slices coloured by op type (ops) or by kind (input wait,
// map, prefetch, optimizer, collectives), step marks as vertical lines.
// The data and the level of detail live in a worker (trace.worker.js):
// for each frame the page sends the time window and width and draws the
// rectangles it gets back, so a million slices stay smooth. Wheel zooms
// about the pointer, a drag pans, W/S zoom and A/D pan as in Perfetto; a
// click shows the slice in the details pane.

import { counted, h } from '../core/dom.js';

const WORKER_URL = '/static/profile_trace.worker.js';
const ROW = 18, TRACK_GAP = 8, LABEL = 150, AXIS = 22;

const KIND_COLOURS = {
  step: '#455a64', input_wait: '#e53935', map: '#fb8c00', prefetch: '#fdd835',
  optimizer: '#8e24aa', collective: '#00897b', comm_wait: '#6d4c41',
};
const OP_PALETTE = ['#1e88e5', '#43a047', '#3949ab', '#00acc1', '#7cb342', '#5e35b1', '#039be5',
  '#26a69a', '#c0ca33', '#1565c0', '#2e7d32', '#0277bd'];

export function colourFor(key, i) {
  if (!key.startsWith('op:')) return KIND_COLOURS[key] ?? '#90a4ae';
  return OP_PALETTE[i % OP_PALETTE.length];
}

const fmtUs = (us) => (us >= 1e6 ? `${(us / 1e6).toFixed(3)} s` : us >= 1e3 ? `${(us / 1e3).toFixed(3)} ms`
  : `${us.toFixed(us < 10 ? 2 : 1)} µs`);

// A trace viewer in `host`; load(run, profile) or synthesize(n, threads).
export function traceViewer(host) {
  const canvas = h('canvas.trace-canvas', { tabIndex: 0, 'aria-label': 'Trace timeline' });
  const details = h('div.trace-details', null, h('span.muted', null, 'Click a slice to see it here.'));
  const status = h('div.trace-status.muted');
  const legend = h('div.trace-legend');
  host.replaceChildren(h('div.trace-wrap', null, status, canvas, legend, details));
  const worker = new Worker(WORKER_URL);
  const state = { meta: null, t0: 0, t1: 1, rects: [], pending: false, frameId: 0, gen: 0,
    firstPaintMs: null, started: 0, lastFrameMs: null, lastRoundTripMs: null };
  // What the end-to-end tests and the benchmark read.
  host.dataset.state = 'loading';
  window.__profileTrace = state;

  function layout() {
    const rows = [];
    let y = AXIS;
    for (const [i, t] of (state.meta?.threads ?? []).entries()) {
      rows.push({ track: i, y, depths: t.depths, name: t.name });
      y += t.depths * ROW + TRACK_GAP;
    }
    return { rows, height: Math.max(y, 80) };
  }

  function size() {
    const { height } = layout();
    const w = Math.max(200, host.clientWidth || 800);
    const dpr = window.devicePixelRatio || 1;
    canvas.width = Math.floor(w * dpr);
    canvas.height = Math.floor(height * dpr);
    canvas.style.width = `${w}px`;
    canvas.style.height = `${height}px`;
    return { w, height, dpr };
  }

  const plotWidth = () => Math.max(50, (host.clientWidth || 800) - LABEL);

  function request() {
    if (!state.meta) return;
    if (state.pending) { state.again = true; return; }
    state.pending = true;
    state.sent = performance.now();
    worker.postMessage({ type: 'frame', id: ++state.frameId, t0: state.t0, t1: state.t1, width: plotWidth() });
  }

  function axis(ctx, w) {
    ctx.fillStyle = '#fafafa';
    ctx.fillRect(0, 0, w, AXIS);
    ctx.fillStyle = '#546e7a';
    ctx.font = '11px system-ui, sans-serif';
    const span = state.t1 - state.t0, pw = plotWidth();
    const step = 10 ** Math.floor(Math.log10(span / 6 || 1));
    const tick = [1, 2, 5, 10].map((m) => m * step).find((s) => span / s <= 8) ?? step * 10;
    for (let t = Math.ceil(state.t0 / tick) * tick; t <= state.t1; t += tick) {
      const x = LABEL + ((t - state.t0) / span) * pw;
      ctx.fillRect(x, AXIS - 5, 1, 5);
      ctx.fillText(fmtUs(t), x + 2, 12);
    }
  }

  function draw() {
    const { w, height, dpr } = size();
    const ctx = canvas.getContext('2d');
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    ctx.clearRect(0, 0, w, height);
    const { rows } = layout();
    const colours = (state.meta?.colours ?? []).map((k, i) => colourFor(k, i));
    for (const r of state.rects) {
      const row = rows[r.track];
      if (!row) continue;
      const y = row.y + r.depth * ROW;
      for (let k = 0; k < r.x.length; k++) {
        ctx.fillStyle = r.c[k] < 0 ? '#78909c' : colours[r.c[k]];
        ctx.fillRect(LABEL + r.x[k], y + 1, Math.max(r.w[k], 0.5), ROW - 2);
      }
      ctx.fillStyle = '#fff';
      ctx.font = '10px system-ui, sans-serif';
      for (const [x, wd, name] of r.labels) ctx.fillText(name.slice(0, Math.floor(wd / 6)), LABEL + x + 2, y + 13);
    }
    // step marks
    const span = state.t1 - state.t0, pw = plotWidth();
    ctx.fillStyle = 'rgba(69,90,100,0.5)';
    for (const s of state.meta?.steps ?? []) {
      if (s < state.t0 || s > state.t1) continue;
      ctx.fillRect(LABEL + ((s - state.t0) / span) * pw, AXIS, 1, height - AXIS);
    }
    // labels over the left margin
    ctx.fillStyle = '#fff';
    ctx.fillRect(0, AXIS, LABEL, height - AXIS);
    ctx.fillStyle = '#263238';
    ctx.font = '12px system-ui, sans-serif';
    for (const row of rows) ctx.fillText(row.name, 6, row.y + 13);
    axis(ctx, w);
    if (state.selected) {
      const sel = state.selected;
      const row = rows.find((r) => r.name === sel.thread);
      if (row) {
        ctx.strokeStyle = '#000';
        ctx.lineWidth = 2;
        const x = LABEL + ((sel.start_us - state.t0) / span) * pw;
        ctx.strokeRect(x, row.y + sel.depth * ROW + 1, Math.max(2, (sel.dur_us / span) * pw), ROW - 2);
      }
    }
  }

  worker.onmessage = (msg) => {
    const m = msg.data;
    if (m.type === 'meta') {
      const first = !state.meta;
      state.meta = m;
      if (first) { state.t0 = 0; state.t1 = Math.max(m.duration, 1); }
      status.textContent = `${counted(m.count, 'event')} on ${counted(m.threads.length, 'thread')}` +
        (m.loaded < m.total ? ` (loading ${m.loaded.toLocaleString()} of ${m.total.toLocaleString()})` : '') +
        ' · wheel or W/S zoom, drag or A/D pan, click a slice';
      legend.replaceChildren(...m.colours.map((k, i) => h('span.trace-key', null,
        h('i', { style: { background: colourFor(k, i) } }), k.replace(/^op:/, ''))));
      request();
    } else if (m.type === 'frame') {
      state.pending = false;
      state.rects = m.rects;
      state.lastFrameMs = m.ms;
      draw();
      state.lastRoundTripMs = performance.now() - state.sent;
      if (state.firstPaintMs === null) state.firstPaintMs = performance.now() - state.started;
      state.frames = (state.frames ?? 0) + 1;
      host.dataset.state = 'ready';
      host.dataset.frames = String(state.frames);
      if (state.again) { state.again = false; request(); }
    } else if (m.type === 'hit') {
      showDetails(m.event);
    } else if (m.type === 'error') {
      status.textContent = m.message;
      host.dataset.state = 'error';
    }
  };

  function showDetails(e) {
    state.selected = e;
    if (!e) {
      details.replaceChildren(h('span.muted', null, 'No slice there.'));
      draw();
      return;
    }
    e.depth = state.hitDepth;
    const rows = [['name', e.name], ['kind', e.kind], ['op type', e.op_type], ['thread', e.thread],
      ['start', fmtUs(e.start_us)], ['duration', fmtUs(e.dur_us)], ['step', e.step ?? '–'],
      ['input shapes', e.shapes], ['FLOPs', e.flops ? e.flops.toLocaleString() : ''],
      ['bytes out', e.bytes ? e.bytes.toLocaleString() : ''], ['backward', e.backward ? 'yes' : '']]
      .filter(([, v]) => v !== '' && v !== undefined);
    details.replaceChildren(h('table.trace-detail-table', null,
      ...rows.map(([k, v]) => h('tr', null, h('th', null, k), h('td', null, String(v))))));
    details.dataset.name = e.name;
    draw();
  }

  // ---- input -----------------------------------------------------------------
  const timeAt = (x) => state.t0 + ((x - LABEL) / plotWidth()) * (state.t1 - state.t0);

  // The window stays inside the capture: at most all of it, at least 50 ns.
  function clamp() {
    const full = Math.max(state.meta?.duration ?? 1, 1);
    const span = Math.min(Math.max(state.t1 - state.t0, 0.05), full);
    state.t0 = Math.min(Math.max(state.t0, 0), full - span);
    state.t1 = state.t0 + span;
  }

  function zoom(factor, x) {
    const at = timeAt(Math.max(LABEL, x));
    const span = (state.t1 - state.t0) * factor;
    const frac = (at - state.t0) / (state.t1 - state.t0);
    state.t0 = at - frac * span;
    state.t1 = state.t0 + span;
    clamp();
    request();
  }

  function pan(dx) {
    const dt = (dx / plotWidth()) * (state.t1 - state.t0);
    state.t0 += dt;
    state.t1 += dt;
    clamp();
    request();
  }

  canvas.addEventListener('wheel', (ev) => {
    ev.preventDefault();
    const rect = canvas.getBoundingClientRect();
    zoom(Math.exp(ev.deltaY * 0.002), ev.clientX - rect.left);
  }, { passive: false });
  let drag = null;
  canvas.addEventListener('mousedown', (ev) => { drag = { x: ev.clientX, moved: 0 }; canvas.focus(); });
  window.addEventListener('mousemove', (ev) => {
    if (!drag) return;
    const dx = ev.clientX - drag.x;
    drag.moved += Math.abs(dx);
    drag.x = ev.clientX;
    if (dx) pan(-dx);
  });
  window.addEventListener('mouseup', (ev) => {
    if (!drag) return;
    const click = drag.moved < 3;
    drag = null;
    if (!click) return;
    const rect = canvas.getBoundingClientRect();
    const x = ev.clientX - rect.left, y = ev.clientY - rect.top;
    const row = layout().rows.find((r) => y >= r.y && y < r.y + r.depths * ROW);
    if (!row || x < LABEL) return;
    state.hitDepth = Math.floor((y - row.y) / ROW);
    const slack = (3 / plotWidth()) * (state.t1 - state.t0);
    worker.postMessage({ type: 'hit', t: timeAt(x), track: row.track, depth: state.hitDepth, slack });
  });
  canvas.addEventListener('keydown', (ev) => {
    const k = ev.key.toLowerCase();
    const mid = LABEL + plotWidth() / 2;
    if (k === 'w') zoom(0.8, mid);
    else if (k === 's') zoom(1.25, mid);
    else if (k === 'a') pan(-plotWidth() * 0.1);
    else if (k === 'd') pan(plotWidth() * 0.1);
    else return;
    ev.preventDefault();
  });
  const ro = new ResizeObserver(() => request());
  ro.observe(host);

  return {
    load(run, profile) {
      state.meta = null;
      state.firstPaintMs = null;
      state.started = performance.now();
      worker.postMessage({ type: 'load', run, profile, gen: ++state.gen });
    },
    synthesize(n, threads) {
      state.meta = null;
      state.firstPaintMs = null;
      state.started = performance.now();
      worker.postMessage({ type: 'synthesize', n, threads, gen: ++state.gen });
    },
    destroy() { ro.disconnect(); worker.terminate(); },
  };
}
