// trace.worker.js — the trace viewer's data, off the page's thread.
//
// Holds a capture's events (fetched page by page from /api/profile/trace,
// or made up for the benchmark), laid out in tracks: one per thread, each
// event at the depth its enclosing ranges give it. For a frame (a time
// window and a width in pixels) it returns the rectangles to draw: an
// event wider than a pixel as itself, runs of narrower ones merged into
// one rectangle per pixel column (level of detail by zoom), so a frame
// costs at most a few thousand rectangles whatever the capture holds.
// Served as /static/profile_trace.worker.js.

const PAGE = 100000;

let tracks = [];      // [{name, depths, start: Float64Array, end, depth: Uint8Array, colour: Uint16Array, index: Int32Array}]
let events = null;    // columns of every event, by global index
let strings = [];
let duration = 0;
let generation = 0;

// Colour classes: the kinds, then op types in order of appearance.
const KINDS = ['op', 'step', 'input_wait', 'map', 'prefetch', 'optimizer', 'collective', 'comm_wait'];
let colourOf = new Map();

function colourIndex(kind, opType) {
  const key = kind === 'op' ? `op:${opType}` : kind;
  let c = colourOf.get(key);
  if (c === undefined) { c = colourOf.size; colourOf.set(key, c); }
  return c;
}

function emptyColumns() {
  return { start: [], dur: [], thread: [], step: [], flops: [], bytes: [], backward: [], kind: [], name: [], op_type: [], shapes: [] };
}

// Adds one page (strings local to the page) to the columns.
function addPage(page) {
  const base = strings.length;
  strings.push(...page.strings);
  const e = page.events;
  for (const k of ['start', 'dur', 'thread', 'step', 'flops', 'bytes', 'backward']) for (const v of e[k]) events[k].push(v);
  for (const k of ['kind', 'name', 'op_type', 'shapes']) for (const v of e[k]) events[k].push(v + base);
}

// Tracks from the columns: per thread, sorted by start, each event's depth
// from the ranges still open when it starts.
function buildTracks(threads) {
  const n = events.start.length;
  const byThread = threads.map(() => []);
  for (let i = 0; i < n; i++) {
    const t = events.thread[i];
    if (strings[events.kind[i]] === 'step') continue;   // marks are drawn as lines
    (byThread[t] ||= []).push(i);
  }
  tracks = byThread.map((idx, t) => {
    idx.sort((a, b) => events.start[a] - events.start[b]);
    const m = idx.length;
    const start = new Float64Array(m), end = new Float64Array(m), depth = new Uint8Array(m);
    const colour = new Uint16Array(m), index = new Int32Array(m);
    const open = [];
    let depths = 1;
    for (let j = 0; j < m; j++) {
      const i = idx[j];
      start[j] = events.start[i];
      end[j] = events.start[i] + events.dur[i];
      while (open.length && open[open.length - 1] <= start[j]) open.pop();
      depth[j] = Math.min(open.length, 15);
      depths = Math.max(depths, depth[j] + 1);
      open.push(end[j]);
      colour[j] = colourIndex(strings[events.kind[i]], strings[events.op_type[i]]);
      index[j] = i;
    }
    // Per depth: the event indices in start order, and the longest event
    // so far, to find the first event visible at a time by binary search.
    const levels = [];
    for (let d = 0; d < depths; d++) {
      const at = [];
      for (let j = 0; j < m; j++) if (depth[j] === d) at.push(j);
      const maxEnd = new Float64Array(at.length);
      let best = -Infinity;
      for (let k = 0; k < at.length; k++) { best = Math.max(best, end[at[k]]); maxEnd[k] = best; }
      levels.push({ at: Int32Array.from(at), maxEnd });
    }
    return { name: threads[t] ?? `thread ${t}`, depths, start, end, colour, index, levels };
  });
}

function steps() {
  const out = [];
  for (let i = 0; i < events.start.length; i++) {
    if (strings[events.kind[i]] === 'step') out.push(events.start[i]);
  }
  return out;
}

function meta(extra = {}) {
  postMessage({ type: 'meta', duration, threads: tracks.map((t) => ({ name: t.name, depths: t.depths })),
    colours: [...colourOf.keys()], steps: steps(), count: events.start.length, ...extra });
}

async function load(run, profile, gen) {
  events = emptyColumns();
  strings = [];
  colourOf = new Map(KINDS.filter((k) => k !== 'op').map((k, i) => [k, i]));
  let offset = 0, total = Infinity, threads = [];
  while (offset < total) {
    const q = new URLSearchParams({ run, profile, offset, limit: PAGE });
    const res = await fetch(`/api/profile/trace?${q}`, { cache: 'no-store' });
    if (!res.ok) { postMessage({ type: 'error', message: (await res.json()).error || res.statusText }); return; }
    const page = await res.json();
    if (gen !== generation) return;
    total = page.total;
    threads = page.threads;
    duration = page.duration_us;
    addPage(page);
    offset += page.events.start.length;
    if (!page.events.start.length) break;
    buildTracks(threads);
    meta({ loaded: offset, total });
  }
  if (total === 0 || offset === 0) { buildTracks(threads); meta({ loaded: 0, total: 0 }); }
}

// A made-up capture of n events over `threads` threads (the benchmark).
function synthesize(n, threadCount) {
  events = emptyColumns();
  strings = ['op', 'input_wait', 'MatMul', 'Add', 'Relu', 'next batch', '', 'step', 'step'];
  colourOf = new Map(KINDS.filter((k) => k !== 'op').map((k, i) => [k, i]));
  const per = Math.floor(n / threadCount);
  let t = 0;
  for (let th = 0; th < threadCount; th++) {
    t = 0;
    for (let i = 0; i < per; i++) {
      const wait = i % 50 === 0;
      const dur = wait ? 40 : 2 + (i % 7);
      events.start.push(t); events.dur.push(dur); events.thread.push(th);
      events.step.push(Math.floor(i / 50)); events.flops.push(0); events.bytes.push(1024);
      events.backward.push(0); events.kind.push(wait ? 1 : 0);
      events.name.push(wait ? 5 : 2 + (i % 3)); events.op_type.push(wait ? 6 : 2 + (i % 3)); events.shapes.push(6);
      t += dur + 0.5;
    }
  }
  duration = t;
  buildTracks(Array.from({ length: threadCount }, (_, i) => `thread ${i}`));
  meta({ loaded: per * threadCount, total: per * threadCount });
}

// The rectangles of [t0, t1] at `width` pixels: per track and depth,
// x, w (pixels), colour (-1: merged narrow events, drawn grey-blue).
function frame(t0, t1, width) {
  const scale = width / Math.max(t1 - t0, 1e-9);
  const out = [];
  for (let ti = 0; ti < tracks.length; ti++) {
    const tr = tracks[ti];
    for (let d = 0; d < tr.depths; d++) {
      const { at, maxEnd } = tr.levels[d];
      // first event whose end can be >= t0
      let lo = 0, hi = at.length;
      while (lo < hi) { const mid = (lo + hi) >> 1; if (maxEnd[mid] < t0) lo = mid + 1; else hi = mid; }
      const xs = [], ws = [], cs = [], ids = [];
      // a run of sub-pixel events: its span, its colour while they share one
      let mergeX = -1, mergeEnd = -1, mergeCount = 0, mergeC = -1, mergeId = -1;
      const flush = () => {
        if (mergeCount) {
          xs.push(mergeX); ws.push(Math.max(1, mergeEnd - mergeX)); cs.push(mergeC);
          ids.push(mergeCount === 1 ? mergeId : -1);
        }
        mergeCount = 0;
      };
      for (let k = lo; k < at.length; k++) {
        const j = at[k];
        const s = tr.start[j];
        if (s > t1) break;
        const e = tr.end[j];
        if (e < t0) continue;
        const x0 = (s - t0) * scale, x1 = (e - t0) * scale;
        if (x1 - x0 >= 1) {
          flush();
          xs.push(x0); ws.push(x1 - x0); cs.push(tr.colour[j]); ids.push(tr.index[j]);
        } else if (mergeCount && Math.floor(x0) <= Math.ceil(mergeEnd)) {
          mergeEnd = Math.max(mergeEnd, x1); mergeCount++;
          if (mergeC !== tr.colour[j]) mergeC = -1;
        } else {
          flush();
          mergeX = x0; mergeEnd = x1; mergeCount = 1; mergeC = tr.colour[j]; mergeId = tr.index[j];
        }
      }
      flush();
      // names for the slices wide enough to show one
      const labels = [];
      for (let k = 0; k < xs.length; k++) if (ws[k] > 40 && ids[k] >= 0) labels.push([xs[k], ws[k], strings[events.name[ids[k]]]]);
      out.push({ track: ti, depth: d, x: Float32Array.from(xs), w: Float32Array.from(ws), c: Int16Array.from(cs), id: Int32Array.from(ids), labels });
    }
  }
  return out;
}

// The event under (time t, track, depth), or null.
function hit(t, track, depth, slack) {
  const tr = tracks[track];
  if (!tr || depth >= tr.depths) return null;
  const { at, maxEnd } = tr.levels[depth];
  // the last event starting by t + slack, then back while one can reach t
  let lo = 0, hi = at.length;
  while (lo < hi) { const mid = (lo + hi) >> 1; if (tr.start[at[mid]] - slack <= t) lo = mid + 1; else hi = mid; }
  let best = -1;
  for (let k = lo - 1; k >= 0 && maxEnd[k] + slack >= t; k--) {
    const j = at[k];
    if (tr.end[j] + slack >= t) { best = j; break; }
  }
  if (best < 0) return null;
  const i = tr.index[best];
  return { index: i, name: strings[events.name[i]], kind: strings[events.kind[i]], op_type: strings[events.op_type[i]],
    shapes: strings[events.shapes[i]], start_us: events.start[i], dur_us: events.dur[i], step: events.step[i],
    flops: events.flops[i], bytes: events.bytes[i], backward: !!events.backward[i], thread: tr.name };
}

onmessage = async (msg) => {
  const m = msg.data;
  if (m.type === 'load') { generation = m.gen; await load(m.run, m.profile, m.gen); }
  else if (m.type === 'synthesize') { generation = m.gen; synthesize(m.n, m.threads); }
  else if (m.type === 'frame') {
    const t = performance.now();
    const rects = frame(m.t0, m.t1, m.width);
    postMessage({ type: 'frame', id: m.id, rects, ms: performance.now() - t },
      rects.flatMap((r) => [r.x.buffer, r.w.buffer, r.c.buffer, r.id.buffer]));
  } else if (m.type === 'hit') {
    postMessage({ type: 'hit', event: hit(m.t, m.track, m.depth, m.slack) });
  }
};
