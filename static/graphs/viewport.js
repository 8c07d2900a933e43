// viewport.js — pan and zoom of the graph's SVG: drag the background to
// pan, the wheel to zoom about the pointer; fit() shows everything, and
// centre() brings one box to the middle.

export class Viewport {
  constructor(svg, layer) {
    this.svg = svg;
    this.layer = layer;
    this.t = { x: 0, y: 0, k: 1 };
    svg.addEventListener('wheel', (ev) => this.#wheel(ev), { passive: false });
    svg.addEventListener('pointerdown', (ev) => this.#drag(ev));
  }

  apply() {
    const { x, y, k } = this.t;
    this.layer.setAttribute('transform', `translate(${x.toFixed(1)},${y.toFixed(1)}) scale(${k.toFixed(4)})`);
    // Open/close buttons stay at least 16 px on screen when zoomed out (to
    // a third of full size), so they stay big enough to hit.
    const grow = Math.max(1, Math.min(3, 16 / (18 * k)));
    this.svg.style.setProperty('--toggle-k', grow.toFixed(3));
    this.svg.style.setProperty('--toggle-shift', `${((grow - 1) * 18).toFixed(1)}px`);
  }

  size() {
    const r = this.svg.getBoundingClientRect();
    return { w: r.width || 800, h: r.height || 600 };
  }

  // Everything in view, unless that makes it unreadably small: then as
  // much as fits at the smallest readable scale, from the top.
  fit(width, height, margin = 24, minScale = 0.3) {
    const { w, h } = this.size();
    const all = Math.min(1.4, (w - 2 * margin) / Math.max(width, 1), (h - 2 * margin) / Math.max(height, 1));
    const k = Math.max(all, Math.min(minScale, 1.4));
    this.t = { k, x: (w - width * k) / 2, y: Math.max(margin, (h - height * k) / 2) };
    this.apply();
  }

  centre(box, minScale = 0.8) {
    const { w, h } = this.size();
    const k = Math.max(this.t.k, minScale);
    this.t = { k, x: w / 2 - (box.x + box.w / 2) * k, y: h / 2 - (box.y + box.h / 2) * k };
    this.apply();
  }

  #wheel(ev) {
    ev.preventDefault();
    const r = this.svg.getBoundingClientRect();
    const px = ev.clientX - r.left, py = ev.clientY - r.top;
    const k = Math.min(4, Math.max(0.02, this.t.k * Math.exp(-ev.deltaY * 0.0015)));
    const f = k / this.t.k;
    this.t = { k, x: px - (px - this.t.x) * f, y: py - (py - this.t.y) * f };
    this.apply();
  }

  #drag(ev) {
    if (ev.button !== 0 || ev.target.closest('.node, .scope.closed, .scope-toggle, .scope-bar')) return;
    const start = { x: ev.clientX, y: ev.clientY, tx: this.t.x, ty: this.t.y };
    let moved = false;
    const move = (m) => {
      moved = moved || Math.abs(m.clientX - start.x) + Math.abs(m.clientY - start.y) > 3;
      this.t = { ...this.t, x: start.tx + m.clientX - start.x, y: start.ty + m.clientY - start.y };
      this.apply();
    };
    const up = () => {
      window.removeEventListener('pointermove', move);
      window.removeEventListener('pointerup', up);
      this.dragged = moved;
    };
    window.addEventListener('pointermove', move);
    window.addEventListener('pointerup', up);
  }
}
