// render.js — a laid-out graph as SVG: opened scopes as framed areas with
// a title bar, closed scopes and ops as boxes, constants as small dots
// beside their consumer, edges as arrows labelled with their tensor's shape
// (or how many tensors a scope-to-scope edge stands for) and as thick as
// the tensor is big. Where an edge enters an opened scope, a dashed bridge
// carries it on to the op inside it joins.
//
// Edge labels never overlap each other or a box: each is placed where
// there is room along its edge, the biggest tensors first, shortened or
// left out when there is none (then shown when the pointer is on the
// edge). Selection and tracing change classes in place (restyle): a click
// never rebuilds the drawing, so the second click of a double-click lands
// on the element the first one hit.

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

// The label of an edge, and a shorter one for when that does not fit.
export function edgeLabel(e) {
  if (e.count > 1) return [`${e.count} tensors`, `×${e.count}`];
  if (e.control) return ['control', ''];
  const t = e.shape ? shapeText(e.shape) : '';
  return [t, ''];
}

const LABEL_H = 11;
const labelWidth = (t) => t.length * 5.4 + 2;

// Rectangles placed so far, in a grid of cells, to test a new one against
// those near it only.
class Room {
  constructor() { this.cells = new Map(); }
  #keys(r) {
    const out = [];
    for (let i = Math.floor(r.x / 64); i <= Math.floor((r.x + r.w) / 64); i++)
      for (let j = Math.floor(r.y / 64); j <= Math.floor((r.y + r.h) / 64); j++) out.push(`${i},${j}`);
    return out;
  }
  free(r) {
    for (const k of this.#keys(r)) {
      for (const o of this.cells.get(k) ?? []) {
        if (r.x < o.x + o.w && o.x < r.x + r.w && r.y < o.y + o.h && o.y < r.y + r.h) return false;
      }
    }
    return true;
  }
  take(r) {
    for (const k of this.#keys(r)) {
      if (!this.cells.has(k)) this.cells.set(k, []);
      this.cells.get(k).push(r);
    }
  }
}

// Where each edge's label goes ({x, y, text}), or null when there is no
// room for it: spots beside the points of its route, middle first, right
// then left; the full text, then the short one. Boxes and the title bars
// of opened scopes are taken first.
function placeLabels(scene) {
  const room = new Room();
  for (const b of scene.boxes) room.take(b.open ? { x: b.x, y: b.y, w: b.w, h: HEADER } : { x: b.x - 1, y: b.y - 4, w: b.w + 5, h: b.h + 5 });
  const order = [...scene.edges].sort((a, b) => b.e.bytes - a.e.bytes || b.e.count - a.e.count);
  const spots = new Map();
  for (const edge of order) {
    const pts = edge.points;
    const mid = Math.floor(pts.length / 2);
    const at = [...new Set([mid, mid - 1, mid + 1, 1, pts.length - 2].filter((i) => i > 0 && i < pts.length - 1))];
    if (!at.length) at.push(mid);
    let spot = null;
    for (const text of edgeLabel(edge.e)) {
      if (!text || spot) continue;
      const w = labelWidth(text);
      for (const i of at) {
        const p = pts[i];
        for (const x of [p.x + 5, p.x - 5 - w]) {
          const r = { x, y: p.y - LABEL_H + 2, w, h: LABEL_H };
          if (room.free(r)) { room.take(r); spot = { x, y: p.y, text }; break; }
        }
        if (spot) break;
      }
    }
    spots.set(edge, spot);
  }
  return spots;
}

function drawEdge(edge, spot, marks, refs) {
  const e = edge.e;
  const base = `edge${e.control ? ' control' : ''}${e.count > 1 ? ' meta' : ''}`;
  const cls = `${base}${marks.edge(e) ? ` ${marks.edge(e)}` : ''}`;
  const [full] = edgeLabel(e);
  const mid = edge.points[Math.floor(edge.points.length / 2)];
  const d = pathThrough(edge.points);
  const el = s('g', { class: cls, 'data-from': e.from.key, 'data-to': e.to.key },
    full ? s('title', {}, `${e.from.label} → ${e.to.label}: ${full}`) : null,
    s('path', { class: 'edge-hit', d }),
    s('path', { class: 'edge-line', d, 'stroke-width': edgeWidth(e.bytes).toFixed(2), 'marker-end': 'url(#gb-arrow)' }),
    ...edge.bridges.map((b) => s('path', { class: 'bridge', d: pathThrough(b) })),
    spot ? s('text', { class: 'edge-label', x: spot.x, y: spot.y - 2 }, spot.text)
      : full ? s('text', { class: 'edge-label hidden', x: mid.x + 5, y: mid.y - 2 }, full) : null);
  refs.edges.push([el, base, e]);
  return el;
}

function drawOpen(box, marks, refs) {
  const g = box.item;
  const base = 'scope open';
  const el = s('g', { class: `${base}${marks.item(g)}`, 'data-path': g.path, 'data-key': g.key, tabindex: 0, role: 'button', 'aria-label': `${g.path} (open; Enter closes it)` },
    s('rect', { class: 'scope-frame', x: box.x, y: box.y, width: box.w, height: box.h, rx: 8 }),
    s('rect', { class: 'scope-bar', x: box.x, y: box.y, width: box.w, height: HEADER - 4, rx: 8 }),
    s('text', { class: 'scope-title', x: box.x + 30, y: box.y + 17 }, `${g.label}  ·  ${groupSubtitle(g)}`),
    toggle(box.x + 6, box.y + 4, '−', g));
  refs.items.push([el, base, g]);
  return el;
}

// The open/close button: 18 units square, and never smaller than 16 px on
// screen down to a third of full size (viewport.js scales it back up, and
// the scope's title moves aside to make room).
export const TOGGLE = 18;
function toggle(x, y, sign, g) {
  return s('g', { class: 'scope-toggle', 'data-toggle': g.key, transform: `translate(${x},${y})` },
    s('g', { class: 'toggle-face' }, s('rect', { width: TOGGLE, height: TOGGLE, rx: 3 }), s('text', { x: TOGGLE / 2, y: 13.5 }, sign)));
}

function drawClosed(box, fill, marks, refs) {
  const it = box.item;
  const ink = inkOn(fill);
  if (it.kind === 'group') {
    const base = `scope closed${it.series ? ' series' : ''}${it.part ? ' part' : ''}`;
    const el = s('g', { class: `${base}${marks.item(it)}`, 'data-path': it.path, 'data-key': it.key, transform: `translate(${box.x},${box.y})`, tabindex: 0, role: 'button', 'aria-label': `${it.path}: ${groupSubtitle(it)} (Enter or double-click opens it)` },
      s('title', {}, `${it.path}: ${groupSubtitle(it)} (double-click or Enter to open)`),
      s('rect', { class: 'box', width: box.w, height: box.h, rx: 6, fill }),
      s('rect', { class: 'box stack', x: 3, y: -3, width: box.w, height: box.h, rx: 6 }),
      s('text', { class: 'scope-label', x: 30, y: 16, fill: ink }, it.label),
      s('text', { class: 'scope-sub', x: 30, y: 31, fill: ink }, groupSubtitle(it)),
      toggle(6, 4, '+', it),
      marks.alertIn(it) ? s('circle', { class: 'alert-dot', cx: box.w - 8, cy: 8, r: 5 }) : null,
      marks.changesIn?.(it) ? s('text', { class: 'diff-badge', x: box.w + 3, y: -7 }, marks.changesIn(it)) : null);
    refs.items.push([el, base, it]);
    return el;
  }
  const annex = it.consts.length ? Math.min(it.consts.length, MAX_CONSTS) * CONST_W + 4 : 0;
  const base = 'node';
  refs.items.push([null, base, it]);
  const at = refs.items.length - 1;
  const el = s('g', { class: `node${marks.item(it)}`, 'data-name': it.name, 'data-key': it.key, 'data-op': it.op, transform: `translate(${box.x},${box.y})` },
    s('title', {}, `${it.name} (${it.op})`),
    ...it.consts.slice(0, MAX_CONSTS).map((c, i) => s('g', { class: 'const', 'data-name': c.name },
      s('title', {}, `${c.name}: Const ${c.outputs[0] ? shapeText(c.outputs[0].shape) : ''}`),
      s('circle', { cx: 6 + i * CONST_W, cy: box.h / 2, r: 4.5 }))),
    it.consts.length > MAX_CONSTS ? s('text', { class: 'const-more', x: annex - 6, y: 9 }, `+${it.consts.length - MAX_CONSTS}`) : null,
    s('rect', { class: 'box', x: annex, width: box.w - annex, height: box.h, rx: 12, fill }),
    s('text', { class: 'node-label', x: annex + (box.w - annex) / 2, y: box.h / 2 + 4, fill: ink }, it.label));
  refs.items[at][0] = el;
  return el;
}

// The whole scene into layer (a <g>); fillOf(item) from colour.js; marks:
// {item(it) -> ' class…', edge(e) -> 'class' or '', alertIn(group) -> bool,
// changesIn(group) -> badge text or ''}. The elements are kept on the
// scene for restyle().
export function draw(layer, scene, fillOf, marks) {
  const frames = s('g', { class: 'frames' });
  const edges = s('g', { class: 'edges' });
  const boxes = s('g', { class: 'boxes' });
  const refs = { items: [], edges: [] };
  for (const box of scene.boxes) {
    if (box.open) frames.append(drawOpen(box, marks, refs));
    else boxes.append(drawClosed(box, fillOf(box.item), marks, refs));
  }
  scene.labels ??= placeLabels(scene);
  for (const edge of scene.edges) edges.append(drawEdge(edge, scene.labels.get(edge), marks, refs));
  layer.replaceChildren(frames, edges, boxes);
  scene.refs = refs;
}

// The marks again (selection, traced inputs), on the elements drawn.
export function restyle(scene, marks) {
  for (const [el, base, it] of scene.refs.items) el.setAttribute('class', `${base}${marks.item(it)}`);
  for (const [el, base, e] of scene.refs.edges) {
    const m = marks.edge(e);
    el.setAttribute('class', m ? `${base} ${m}` : base);
  }
}

export function defs() {
  return s('defs', {},
    s('marker', { id: 'gb-arrow', viewBox: '0 0 10 10', refX: 9, refY: 5, markerWidth: 7, markerHeight: 7, orient: 'auto-start-reverse', markerUnits: 'userSpaceOnUse' },
      s('path', { d: 'M0,1L10,5L0,9z', class: 'arrow' })));
}

