// view.js — one drawn graph of the Graphs page: an SVG with pan and zoom,
// the graph's hierarchy (hierarchy.js), its layouts in a pair of workers
// of its own (layout.js) and the scene of what is open. The page shows
// one, or two side by side to compare a function's stages; each draws the
// scopes the page says are open.

import { h } from '../core/dom.js';
import { buildHierarchy } from './hierarchy.js';
import { Layouts } from './layout.js';
import { assemble, defs, draw, restyle, s } from './render.js';
import { Viewport } from './viewport.js';

export class GraphView {
  // on: {click(view, ev), dblclick(view, ev), keydown(view, ev)}.
  constructor(workerUrl, on, id = 'graph-svg') {
    this.workerUrl = workerUrl;
    this.layer = s('g', { class: 'viewport' });
    this.svg = s('svg', { class: 'graph-svg', id, role: 'img', 'aria-label': 'Graph' }, defs(), this.layer);
    this.viewport = new Viewport(this.svg, this.layer);
    this.title = h('div.graph-canvas-title');
    this.status = h('div.graph-status');
    this.el = h('div.graph-canvas', null, this.title, this.svg, this.status);
    this.data = null;
    this.model = null;
    this.scene = null;
    this.layouts = null;
    for (const type of ['click', 'dblclick', 'keydown']) this.svg.addEventListener(type, (ev) => on[type](this, ev));
    // A double-click opens a scope; it must not also select text nearby.
    this.svg.addEventListener('mousedown', (ev) => { if (ev.detail > 1) ev.preventDefault(); });
  }

  // A new graph (the response of /api/graphs/graph): its hierarchy, and
  // workers with an empty layout cache.
  show(data) {
    this.layouts?.destroy();
    this.layouts = new Layouts(this.workerUrl);
    this.data = data;
    this.model = buildHierarchy(data.graph, data.profile || {});
    this.scene = null;
  }

  // Lays out what is open (urgent: before any background layout).
  async layout(open) {
    const tree = await this.layouts.of(this.model.root, open);
    this.scene = assemble(tree);
    return this.scene;
  }

  paint(fill, marks) {
    if (!this.scene) return;
    draw(this.layer, this.scene, fill, marks);
    this.viewport.apply();
  }

  // Selection and traced inputs: classes only, the elements stay.
  restyle(marks) {
    if (this.scene?.refs) restyle(this.scene, marks);
  }

  fit() {
    if (this.scene) this.viewport.fit(this.scene.width, this.scene.height);
  }

  // The item an element of the drawing stands for.
  itemOf(el) {
    const key = el?.dataset.key;
    if (!key || !this.model) return null;
    return key.startsWith('n:') ? this.model.byName.get(key.slice(2)) : this.model.groups.get(key.slice(2));
  }

  destroy() {
    this.layouts?.destroy();
    this.layouts = null;
  }
}
