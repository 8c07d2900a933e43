// layout.worker.js — lays out one scope of a graph, off the page's thread.
//
// The Graphs page sends a scope as boxes (its children, sized: an op, a
// closed scope, or an opened scope as big as its own layout) and the edges
// between them; dagre (a layered, Sugiyama-style layout) places them, top
// to bottom, in this Web Worker, so even a layout that takes a second
// never freezes the page. Bundled on its own (webui/CMakeLists.txt) and
// served as /static/graphs_layout.worker.js.
//
//   in:  {id, nodes: [{id, width, height}], edges: [{from, to, weight}]}
//   out: {id, width, height, nodes: [{x, y}] (centres, in order),
//         edges: [[{x, y}, ...]] (each edge's route, in order), ms}

import { graphlib, layout } from '@dagrejs/dagre';

function place(msg) {
  const g = new graphlib.Graph({ multigraph: true });
  g.setGraph({ rankdir: 'TB', nodesep: 22, ranksep: 34, edgesep: 8, marginx: 0, marginy: 0 });
  msg.nodes.forEach((n, i) => g.setNode(String(i), { width: n.width, height: n.height }));
  msg.edges.forEach((e, i) => g.setEdge(String(e.from), String(e.to), { weight: e.weight, minlen: 1 }, String(i)));
  layout(g);
  const info = g.graph();
  return {
    width: Math.max(info.width || 0, 1),
    height: Math.max(info.height || 0, 1),
    nodes: msg.nodes.map((_, i) => {
      const n = g.node(String(i));
      return { x: n.x, y: n.y };
    }),
    edges: msg.edges.map((e, i) => g.edge({ v: String(e.from), w: String(e.to), name: String(i) }).points),
  };
}

self.onmessage = (ev) => {
  const t0 = performance.now();
  try {
    self.postMessage({ id: ev.data.id, ...place(ev.data), ms: performance.now() - t0 });
  } catch (err) {
    self.postMessage({ id: ev.data.id, error: String(err && err.message ? err.message : err) });
  }
};
