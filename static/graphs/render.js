// render.js — a laid-out graph as SVG: opened scopes as framed areas with
// a title bar, closed scopes and ops as boxes, constants as small dots
// beside their consumer, edges as arrows labelled with their tensor's shape
// (or how many tensors a scope-to-scope edge stands for) and as thick as
// the tensor is big. Where an edge enters an opened scope, a dashed bridge
// carries it on to the op inside it joins.

import { inkOn } from './colour.js';
import { CONST_W, HEADER, MAX_CONSTS, groupSubtitle } from './layout.js';
import { shapeText } from './hierarchy.js';

const NS = 'http://www.w3.org/2000/svg';

export function s(tag, attrs = {}, ...children) {
  const el = document.createElementNS(NS, tag);
  for (const [k, v] of Object.entries(attrs)) if (v !== undefined && v !== null && v !== false) el.setAttribute(k, v);
  for (const c of children) if (c) el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  return el;
}

// Absolute boxes and edge routes from a layout tree (layout.js's of()).
export function assemble(tree) {
  const out = { boxes: [], edges: [], where: new Map() };
  place(tree, 0, 0, out);
  for (const edge of out.edges) edge.bridges = bridges(edge, out.where);
  out.width = tree.width;
  out.height = tree.height;
  return out;
}

function place(tree, ox, oy, out) {
  tree.scope.children.forEach((c, i) => {
    const p = tree.nodes[i], size = tree.sizes[i];
    const box = { item: c, x: ox + p.x - size.width / 2, y: oy + p.y - size.height / 2, w: size.width, h: size.height };
    const sub = tree.open.get(c.key);
    box.open = Boolean(sub);
    out.boxes.push(box);
    out.where.set(c.key, box);
    if (sub) place(sub, box.x + (box.w - sub.width) / 2, box.y + HEADER, out);
  });
  [...tree.scope.edges.values()].forEach((e, i) => {
    out.edges.push({ e, points: tree.edges[i].map((q) => ({ x: q.x + ox, y: q.y + oy })) });
  });
}

// What shows of item: itself, or its outermost closed scope.
export function visibleOf(item, where) {
  const chain = [];
  for (let x = item; x && x.parent; x = x.parent) chain.push(x);
  for (let i = chain.length - 1; i >= 0; i--) {
    const box = where.get(chain[i].key);
    if (!box) return null;
    if (!box.open) return box;
  }
  return null;
}

// For an edge whose end is an opened scope: a dashed line from the route's
// end to each op (or closed scope) inside that the edge stands for.
function bridges(edge, where) {
  const out = [];
  const ends = [['from', 'u', 0], ['to', 'v', edge.points.length - 1]];
  for (const [side, end, at] of ends) {
    const box = where.get(edge.e[side].key);
    if (!box?.open) continue;
    const seen = new Set();
    for (const b of edge.e.base) {
      const inner = visibleOf(b[end], where);
      if (!inner || seen.has(inner) || seen.size >= 8) continue;
      seen.add(inner);
      const p = edge.points[at];
      const q = { x: inner.x + inner.w / 2, y: side === 'from' ? inner.y + inner.h : inner.y };
      out.push(side === 'from' ? [q, p] : [p, q]);
    }
  }
  return out;
}

// A smooth path through points (quadratic joins at the corners).
function pathThrough(pts) {
  if (pts.length < 3) return `M${pts.map((p) => `${p.x},${p.y}`).join('L')}`;
  let d = `M${pts[0].x},${pts[0].y}`;
  for (let i = 1; i < pts.length - 1; i++) {
    const mx = (pts[i].x + pts[i + 1].x) / 2, my = (pts[i].y + pts[i + 1].y) / 2;
    d += `Q${pts[i].x},${pts[i].y} ${i === pts.length - 2 ? `${pts[i + 1].x},${pts[i + 1].y}` : `${mx},${my}`}`;
  }
  return d;
}

// 1 px for a scalar, up to 7 px for tens of MiB.
export function edgeWidth(bytes) {
  return bytes ? Math.min(7, 1 + Math.log10(1 + bytes / 256) * 1.2) : 1;
}

function edgeLabel(e) {
  if (e.count > 1) return `${e.count} tensors`;
  if (e.control) return 'control';
  return e.shape ? shapeText(e.shape) : '';
}

function drawEdge(edge, marks) {
  const e = edge.e;
  const cls = `edge${e.control ? ' control' : ''}${e.count > 1 ? ' meta' : ''}${marks.edge(e) ? ` ${marks.edge(e)}` : ''}`;
  const mid = edge.points[Math.floor(edge.points.length / 2)];
  return s('g', { class: cls, 'data-from': e.from.key, 'data-to': e.to.key },
    s('path', { d: pathThrough(edge.points), 'stroke-width': edgeWidth(e.bytes).toFixed(2), 'marker-end': 'url(#gb-arrow)' }),
    ...edge.bridges.map((b) => s('path', { class: 'bridge', d: pathThrough(b) })),
    s('text', { class: 'edge-label', x: mid.x + 6, y: mid.y - 3 }, edgeLabel(e)));
}

function drawOpen(box, marks) {
  const g = box.item;
  return s('g', { class: `scope open${marks.item(g)}`, 'data-path': g.path, 'data-key': g.key },
    s('rect', { class: 'scope-frame', x: box.x, y: box.y, width: box.w, height: box.h, rx: 8 }),
    s('rect', { class: 'scope-bar', x: box.x, y: box.y, width: box.w, height: HEADER - 6, rx: 8 }),
    s('text', { class: 'scope-title', x: box.x + 28, y: box.y + 17 }, `${g.label}  ·  ${groupSubtitle(g)}`),
    toggle(box.x + 8, box.y + 5, '−', g));
}

function toggle(x, y, sign, g) {
  return s('g', { class: 'scope-toggle', 'data-toggle': g.key, transform: `translate(${x},${y})` },
    s('rect', { width: 14, height: 14, rx: 3 }), s('text', { x: 7, y: 11 }, sign));
}

function drawClosed(box, fill, marks) {
  const it = box.item;
  const ink = inkOn(fill);
  if (it.kind === 'group') {
    return s('g', { class: `scope closed${marks.item(it)}`, 'data-path': it.path, 'data-key': it.key, transform: `translate(${box.x},${box.y})` },
      s('title', {}, `${it.path}: ${groupSubtitle(it)} (double-click to open)`),
      s('rect', { class: 'box', width: box.w, height: box.h, rx: 6, fill }),
      s('rect', { class: 'box stack', x: 3, y: -3, width: box.w, height: box.h, rx: 6 }),
      s('text', { class: 'scope-label', x: 28, y: 16, fill: ink }, it.label),
      s('text', { class: 'scope-sub', x: 28, y: 31, fill: ink }, groupSubtitle(it)),
      toggle(8, 5, '+', it),
      marks.alertIn(it) ? s('circle', { class: 'alert-dot', cx: box.w - 8, cy: 8, r: 5 }) : null);
  }
  const annex = it.consts.length ? Math.min(it.consts.length, MAX_CONSTS) * CONST_W + 4 : 0;
  return s('g', { class: `node${marks.item(it)}`, 'data-name': it.name, 'data-key': it.key, 'data-op': it.op, transform: `translate(${box.x},${box.y})` },
    s('title', {}, `${it.name} (${it.op})`),
    ...it.consts.slice(0, MAX_CONSTS).map((c, i) => s('g', { class: 'const', 'data-name': c.name },
      s('title', {}, `${c.name}: Const ${c.outputs[0] ? shapeText(c.outputs[0].shape) : ''}`),
      s('circle', { cx: 6 + i * CONST_W, cy: box.h / 2, r: 4.5 }))),
    it.consts.length > MAX_CONSTS ? s('text', { class: 'const-more', x: annex - 6, y: 9 }, `+${it.consts.length - MAX_CONSTS}`) : null,
    s('rect', { class: 'box', x: annex, width: box.w - annex, height: box.h, rx: 12, fill }),
    s('text', { class: 'node-label', x: annex + (box.w - annex) / 2, y: box.h / 2 + 4, fill: ink }, it.label));
}

// The whole scene into layer (a <g>); fillOf(item) from colour.js; marks:
// {item(it) -> ' class…', edge(e) -> 'class' or '', alertIn(group) -> bool}.
export function draw(layer, scene, fillOf, marks) {
  const frames = s('g', { class: 'frames' });
  const edges = s('g', { class: 'edges' });
  const boxes = s('g', { class: 'boxes' });
  for (const box of scene.boxes) {
    if (box.open) frames.append(drawOpen(box, marks));
    else boxes.append(drawClosed(box, fillOf(box.item), marks));
  }
  for (const edge of scene.edges) edges.append(drawEdge(edge, marks));
  layer.replaceChildren(frames, edges, boxes);
}

export function defs() {
  return s('defs', {},
    s('marker', { id: 'gb-arrow', viewBox: '0 0 10 10', refX: 9, refY: 5, markerWidth: 7, markerHeight: 7, orient: 'auto-start-reverse', markerUnits: 'userSpaceOnUse' },
      s('path', { d: 'M0,1L10,5L0,9z', class: 'arrow' })));
}

