// series.js — the scalar series of the cards on screen, each fetched once
// and then kept up to date. The first fetch is bucketed by the server to
// POINTS rows (a bucket keeps its min and max, so no spike is lost); after
// a change in the store the steps after the last one held are appended,
// and the series is re-bucketed when too many rows pile up. A series is
// fetched again only when the store changed (ctx.generation) since.

import { getJSON } from '../core/api.js';
import { num } from '../core/dom.js';

export const POINTS = 1000;   // per series: ~2 per pixel of a wide card
const REFETCH_AFTER = 4000;   // rows held before a live series is re-bucketed
// Series held at most: scrolling through 10,000 cards must not keep all of
// their series (each up to POINTS rows); the oldest fetched go first, and
// come again if their card does.
const MAX_HELD = 2000;
const COLUMNS = ['step', 'step_last', 'wall', 'value', 'min', 'max', 'nan', 'posinf', 'neginf'];

function toSeries(r) {
  return {
    downsampled: r.downsampled, total: r.total_points,
    // Raw points come without step_last/min/max: they equal step/value.
    step: r.step, step_last: r.step_last ?? r.step.slice(), wall: r.wall, value: r.value.map(num),
    min: (r.min ?? r.value).map(num), max: (r.max ?? r.value).map(num),
    nan: r.nan, posinf: r.posinf, neginf: r.neginf,
  };
}

// params: min_step, max_step, points (a zoomed range at full resolution).
export async function fetchSeries(run, tag, params = {}) {
  return toSeries(await getJSON('scalars/series', { run, tag, points: POINTS, ...params }));
}

// Appends the steps after the last one held; true when some came.
async function appendNew(run, tag, s) {
  // A bucket's row is at its first step: ask for what follows its last.
  const last = s.step_last.length ? s.step_last[s.step_last.length - 1] : -1;
  const r = await getJSON('scalars/series', { run, tag, points: POINTS, since: last });
  if (!r.step.length) return false;
  const add = toSeries(r);
  if (add.downsampled || s.step.length + add.step.length > REFETCH_AFTER) {
    Object.assign(s, await fetchSeries(run, tag));
    return true;
  }
  for (const k of COLUMNS) s[k].push(...add[k]);
  s.total += add.total;
  return true;
}

const key = (run, tag) => `${run}\u0000${tag}`;

export class SeriesCache {
  constructor() {
    this.entries = new Map();   // "run\0tag" -> {series, generation, queue}
  }

  // The series held for run and tag, or null.
  get(run, tag) { return this.entries.get(key(run, tag))?.series ?? null; }

  // Series of runs no longer shown are dropped: they would miss live
  // updates while hidden, so showing the run again fetches it afresh.
  keepRuns(runs) {
    for (const k of this.entries.keys()) if (!runs.includes(k.split('\u0000')[0])) this.entries.delete(k);
  }

  // Brings a series up to the store's generation: fetched the first time,
  // appended to after a change. Resolves true when this call changed it.
  // Calls for a generation already asked for wait for that fetch instead
  // of repeating it; fetches of one series run one after another.
  update(run, tag, generation) {
    const k = key(run, tag);
    if (!this.entries.has(k)) {
      this.entries.set(k, { series: null, generation: undefined, queue: Promise.resolve() });
      for (const old of this.entries.keys()) {
        if (this.entries.size <= MAX_HELD) break;
        this.entries.delete(old);
      }
    }
    const e = this.entries.get(k);
    if (e.generation === generation) return e.queue.then(() => false);
    e.generation = generation;
    const job = e.queue.then(async () => {
      if (e.series) return appendNew(run, tag, e.series);
      e.series = await fetchSeries(run, tag);
      return true;
    });
    // A failed fetch is retried next time; the error goes to the caller.
    e.queue = job.catch(() => { e.generation = undefined; });
    return job;
  }
}
