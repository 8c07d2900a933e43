// layout.js — the page's side of the layout: what size each box is, a
// cache of each scope's dagre layout with its children closed, and two Web
// Workers that run dagre (layout.worker.js).
//
// Opening a scope lays out that scope alone (unless cached); the scopes
// around it make room by stretching their cached layouts (stretch.js).
// Requests the person waits for go before the background ones that lay
// out every closed scope ahead of time, so the first click on a scope
// usually finds its layout ready.

import { stretch } from './stretch.js';

export const PAD = 14;        // inside an opened scope's border
export const HEADER = 30;     // an opened scope's title bar
export const NODE_H = 26;
export const GROUP_H = 40;
export const CONST_W = 14;    // each constant drawn beside its consumer
export const MAX_CONSTS = 3;

const clamp = (x, lo, hi) => Math.max(lo, Math.min(hi, x));

export const groupSubtitle = (g) => `${g.series ? `×${g.series} · ` : ''}${g.count.toLocaleString('en-US')} node${g.count === 1 ? '' : 's'}`;

// The box of an op, or of a closed scope.
export function closedSize(item) {
  if (item.kind === 'node') {
    const consts = Math.min(item.consts.length, MAX_CONSTS);
    const annex = consts ? consts * CONST_W + 4 : 0;
    return { width: clamp(item.label.length * 6.6 + 26, 56, 220) + annex, height: NODE_H };
  }
  const text = Math.max(item.label.length * 7.2, groupSubtitle(item).length * 6);
  return { width: clamp(text + 44, 96, 260), height: GROUP_H };
}

export class Layouts {
  constructor(workerUrl) {
    // Two workers: one for what the person waits for, one for laying out
    // closed scopes ahead of time, so a click never queues behind those.
    this.lanes = [0, 1].map((lane) => {
      const worker = new Worker(workerUrl);
      worker.onmessage = (ev) => this.#done(lane, ev.data);
      worker.onerror = (ev) => this.#fail(ev.message || 'the layout worker failed');
      return { worker, running: null };
    });
    this.cache = new Map();       // scope key -> its layout with every child closed
    this.inflight = new Map();    // same keys -> promise
    this.queue = [];              // [{key, msg, resolve, reject, urgent}], urgent first
    this.nextId = 1;
    this.stats = { runs: 0, ms: 0, last: [] };   // worker ms per layout
  }

  destroy() {
    for (const l of this.lanes) l.worker.terminate();
    this.queue = [];
  }

  // The layout tree of scope g with the scopes in `open` opened:
  // {scope, width, height, nodes: [{x, y}], edges: [points], sizes, open: Map(key -> subtree)}.
  // dagre lays out g with its children closed (once: cached); opened
  // children then stretch that layout (stretch.js).
  async of(g, open, urgent = true) {
    const closed = g.children.map(closedSize);
    const opened = g.children.filter((c) => c.kind === 'group' && open.has(c.key));
    const [base, ...subs] = await Promise.all([this.#layout(g, closed, urgent),
      ...opened.map((c) => this.of(c, open, urgent))]);
    const inner = new Map(opened.map((c, i) => [c.key, subs[i]]));
    if (!opened.length) return { scope: g, ...base, sizes: closed, open: inner };
    const sizes = g.children.map((c, i) => (inner.has(c.key) ? openSize(c, inner.get(c.key)) : closed[i]));
    return { scope: g, ...stretch(base, closed, sizes), sizes, open: inner };
  }

  // Lays out each closed scope ahead of time, shallow ones first, while
  // nothing urgent waits.
  prefetch(root) {
    const order = [];
    for (let level = [root]; level.length; level = level.flatMap((g) => g.children.filter((c) => c.kind === 'group'))) {
      order.push(...level.filter((g) => g !== root));
    }
    for (const g of order) this.#layout(g, g.children.map(closedSize), false).catch(() => {});
  }

  #layout(g, sizes, urgent) {
    const key = g.key;
    const hit = this.cache.get(key);
    if (hit) return Promise.resolve(hit);
    let p = this.inflight.get(key);
    if (p) {
      if (urgent) this.#promote(key);
      return p;
    }
    const index = new Map(g.children.map((c, i) => [c, i]));
    const msg = {
      nodes: sizes,
      edges: [...g.edges.values()].map((e) => ({ from: index.get(e.from), to: index.get(e.to), weight: Math.min(e.count, 10) })),
    };
    const ends = msg.edges.map((e) => [e.from, e.to]);
    p = new Promise((resolve, reject) => {
      const job = { key, msg, resolve, reject, urgent };
      if (urgent) this.queue.unshift(job); else this.queue.push(job);
    }).then((r) => {
      r.ends = ends;
      this.cache.set(key, r);
      this.inflight.delete(key);
      return r;
    }, (err) => {
      this.inflight.delete(key);
      throw err;
    });
    this.inflight.set(key, p);
    this.#pump();
    return p;
  }

  #promote(key) {
    const i = this.queue.findIndex((j) => j.key === key);
    if (i > 0) {
      const [job] = this.queue.splice(i, 1);
      job.urgent = true;
      this.queue.unshift(job);
    }
  }

  // Lane 0 takes only urgent jobs, so one is never stuck behind a
  // background one; lane 1 takes whatever is first (urgent ones are).
  #pump() {
    for (const [n, lane] of this.lanes.entries()) {
      if (lane.running || !this.queue.length) continue;
      // While the person waits, lane 1 starts no background work: two
      // cores, and the layout they wait for should have one to itself.
      const urgentRunning = this.lanes[0].running?.urgent;
      const i = n === 0 ? (this.queue[0].urgent ? 0 : -1) : (this.queue[0].urgent || !urgentRunning ? 0 : -1);
      if (i < 0) continue;
      const [job] = this.queue.splice(i, 1);
      job.msg.id = this.nextId++;
      lane.running = job;
      lane.worker.postMessage(job.msg);
    }
  }

  #done(n, res) {
    const lane = this.lanes[n];
    const job = lane.running;
    lane.running = null;
    if (job && res.id === job.msg.id) {
      if (res.error) job.reject(new Error(`layout: ${res.error}`));
      else {
        this.stats.runs++;
        this.stats.ms += res.ms;
        this.stats.last = [...this.stats.last.slice(-9), Math.round(res.ms)];
        job.resolve({ width: res.width, height: res.height, nodes: res.nodes, edges: res.edges });
      }
    }
    this.#pump();
  }

  #fail(message) {
    const jobs = [...this.lanes.map((l) => l.running), ...this.queue].filter(Boolean);
    for (const l of this.lanes) l.running = null;
    this.queue = [];
    for (const j of jobs) j.reject(new Error(message));
  }
}

// An opened scope: its layout plus border and title bar; never narrower
// than its title.
export function openSize(g, tree) {
  return {
    width: Math.max(tree.width + 2 * PAD, closedSize(g).width + 40),
    height: tree.height + HEADER + PAD,
  };
}
