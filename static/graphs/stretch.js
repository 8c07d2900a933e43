// stretch.js — a scope's layout after some of its children opened, made
// from its layout with every child closed, in one pass on the page's
// thread instead of a new dagre run.
//
// Ranks and the order within each rank do not depend on box sizes; only
// the coordinates do. So each opened child stretches the plane around
// itself: everything left of its centre moves left by half its growth in
// width, everything right of it moves right, and each rank below moves
// down by what the ranks above it grew in height. Nothing keeps its place
// but nothing reshuffles either: the rest of the graph stays where the
// person last saw it (TensorBoard lays the whole graph out afresh on every
// expand), and opening a scope in a 10,000-node graph costs one layout of
// that scope alone.

// base: {width, height, nodes: [{x, y}], edges: [[{x, y}]]} for sizes
// `before`; returns the same for sizes `after` (same children, same order).
export function stretch(base, before, after) {
  const grown = [];
  before.forEach((b, i) => {
    const a = after[i];
    if (a.width !== b.width || a.height !== b.height) grown.push({ x: base.nodes[i].x, dw: a.width - b.width });
  });
  const X = (x) => grown.reduce((v, g) => v + Math.sign(x - g.x) * (g.dw / 2), x);
  const Y = rankShift(base, before, after);

  const nodes = base.nodes.map((p) => ({ x: X(p.x), y: Y(p.y) }));
  const edges = base.edges.map((pts) => pts.map((p) => ({ x: X(p.x), y: Y(p.y) })));
  // An edge's ends sat on its boxes' borders: put them on the new borders.
  base.edges.forEach((pts, k) => {
    const [u, v] = base.ends[k];
    edges[k][0] = onBorder(pts[0], base.nodes[u], before[u], nodes[u], after[u]);
    edges[k][pts.length - 1] = onBorder(pts[pts.length - 1], base.nodes[v], before[v], nodes[v], after[v]);
  });
  return frame(nodes, edges, after);
}

// y -> y after each rank grew by the most any of its boxes grew.
function rankShift(base, before, after) {
  const growth = new Map();    // rank centre y -> growth in height
  base.nodes.forEach((p, i) => {
    const dh = after[i].height - before[i].height;
    growth.set(p.y, Math.max(growth.get(p.y) ?? 0, dh));
  });
  const ranks = [...growth].filter(([, dh]) => dh > 0).sort((a, b) => a[0] - b[0]);
  return (y) => {
    let shift = 0;
    for (const [ry, dh] of ranks) {
      if (y > ry + 0.5) shift += dh;
      else if (Math.abs(y - ry) <= 0.5) shift += dh / 2;
    }
    return y + shift;
  };
}

// A point on the border of box (centre c0, size s0), on the same side of
// the box once it is centred at c1 with size s1.
function onBorder(p, c0, s0, c1, s1) {
  return {
    x: c1.x + (p.x - c0.x) * (s1.width / s0.width),
    y: c1.y + (p.y - c0.y) * (s1.height / s0.height),
  };
}

// Moves everything so the boxes start at 0,0; the size that holds them.
function frame(nodes, edges, sizes) {
  let x0 = Infinity, y0 = Infinity, x1 = -Infinity, y1 = -Infinity;
  nodes.forEach((p, i) => {
    x0 = Math.min(x0, p.x - sizes[i].width / 2);
    x1 = Math.max(x1, p.x + sizes[i].width / 2);
    y0 = Math.min(y0, p.y - sizes[i].height / 2);
    y1 = Math.max(y1, p.y + sizes[i].height / 2);
  });
  for (const pts of edges) for (const p of pts) {
    x0 = Math.min(x0, p.x); x1 = Math.max(x1, p.x);
    y0 = Math.min(y0, p.y); y1 = Math.max(y1, p.y);
  }
  const move = (p) => ({ x: p.x - x0, y: p.y - y0 });
  return { width: x1 - x0, height: y1 - y0, nodes: nodes.map(move), edges: edges.map((pts) => pts.map(move)) };
}
