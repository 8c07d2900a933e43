// card_window.js — a grid of tag cards in groups (groupTags: "train/loss"
// under "train") of which only the cards on or near the screen exist:
// windowed rendering, so a board of 10,000 tags holds a few dozen card
// elements, not 10,000. The grid's full height is kept by its container,
// and each card and group heading is placed absolutely at the position it
// would have in the grid the page's CSS lays out (.cards: columns of at
// least minWidth px, gap px apart), so the scroll bar and the page are
// what they would be with every card present.
//
// Positions are computed, never measured, from the cards' fixed height
// (rowHeight): what lies far away costs nothing to place. A small grid
// (at most renderAll cards) is rendered whole: the browser's find then
// reaches every title, and nothing changes as one scrolls.
//
//   const w = cardWindow({ make(tag) -> element, made?(tag, element), drop(tag, element), rowHeight });
//                   made: the element is in the page (where it can be measured)
//   w.el            the container to put in the page
//   w.set(tags)     the tags to show (sorted), in their groups
//   w.rendered()    the tags whose cards exist now
//   w.destroy()

import { groupTags, h } from './dom.js';
import './card_window.css';

const HEADER = 34;        // a group's heading: its height and the space below it
const GROUP_GAP = 18;     // between groups (.groups' gap)

export function cardWindow({ make, made = () => {}, drop, rowHeight, minWidth = 440, gap = 16, margin = 1200, renderAll = 200 }) {
  const el = h('div.card-window');
  const live = new Map();      // tag -> its card's element, for the cards that exist
  const heads = new Map();     // group -> its heading's element
  let groups = [];             // {g, tags, top, rowsTop, rows}
  let cols = 1, colWidth = minWidth, total = 0, width = 0;
  let frame = 0;

  // Positions of every group and row for the container's width.
  function place() {
    width = el.clientWidth || width || minWidth;
    cols = Math.max(1, Math.floor((width + gap) / (minWidth + gap)));
    colWidth = (width - gap * (cols - 1)) / cols;
    let y = 0;
    for (const grp of groups) {
      if (grp !== groups[0]) y += GROUP_GAP;
      grp.top = y;
      grp.rowsTop = y + (grp.g ? HEADER : 0);
      grp.rows = Math.ceil(grp.tags.length / cols);
      y = grp.rowsTop + grp.rows * rowHeight + (grp.rows - 1) * gap;
    }
    total = groups.length ? y : 0;
    el.style.height = `${total}px`;
  }

  // The first group whose bottom lies below y (binary search: groups are in order).
  function firstGroupBelow(y) {
    let lo = 0, hi = groups.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      const g = groups[mid];
      if (g.rowsTop + g.rows * (rowHeight + gap) < y) lo = mid + 1; else hi = mid;
    }
    return lo;
  }

  // Keys, in grid order, of what lies within [lo, hi] of the container.
  function wantedBetween(lo, hi) {
    const out = [];
    for (let i = firstGroupBelow(lo); i < groups.length && groups[i].top <= hi; i++) {
      const grp = groups[i];
      if (grp.g) out.push({ grp, top: grp.top });
      const step = rowHeight + gap;
      const r0 = Math.max(0, Math.floor((lo - grp.rowsTop) / step));
      const r1 = Math.min(grp.rows - 1, Math.floor((hi - grp.rowsTop) / step));
      for (let r = r0; r <= r1; r++)
        for (let c = 0; c < cols; c++) {
          const tag = grp.tags[r * cols + c];
          if (tag !== undefined) out.push({ tag, top: grp.rowsTop + r * step, col: c });
        }
    }
    return out;
  }

  function heading(grp) {
    return h('h2.group-title', { 'data-group': grp.g }, grp.g, h('span.muted', null, ` · ${grp.tags.length}`));
  }

  // Creates what came into the window, drops what left it, places the rest.
  function render() {
    frame = 0;
    const count = groups.reduce((n, g) => n + g.tags.length, 0);
    let lo = -Infinity, hi = Infinity;
    if (count > renderAll) {
      const top = el.getBoundingClientRect().top;
      const reach = Math.max(margin, window.innerHeight);
      lo = -top - reach;
      hi = -top + window.innerHeight + reach;
    }
    const wanted = wantedBetween(lo, hi);
    const cards = new Set(), groupsIn = new Set();
    for (const w of wanted) if (w.tag === undefined) groupsIn.add(w.grp.g); else cards.add(w.tag);
    for (const [tag, node] of live) if (!cards.has(tag)) { live.delete(tag); node.remove(); drop(tag, node); }
    for (const [g, node] of heads) if (!groupsIn.has(g)) { heads.delete(g); node.remove(); }
    const order = [], fresh = [];
    for (const w of wanted) {
      const map = w.tag === undefined ? heads : live, key = w.tag ?? w.grp.g;
      let node = map.get(key);
      if (!node) {
        map.set(key, node = w.tag === undefined ? heading(w.grp) : make(w.tag));
        if (w.tag !== undefined) fresh.push(w.tag);
      }
      node.style.top = `${w.top}px`;
      if (w.tag !== undefined) {
        node.style.left = `${w.col * (colWidth + gap)}px`;
        node.style.width = `${colWidth}px`;
      }
      order.push(node);
    }
    // The DOM in grid order (what reads the page, people and tests, sees
    // cards in order); moved only when the set changed.
    const now = el.children;
    if (now.length !== order.length || order.some((n, i) => now[i] !== n)) el.replaceChildren(...order);
    for (const tag of fresh) made(tag, live.get(tag));
  }

  const schedule = () => { if (!frame) frame = requestAnimationFrame(render); };
  const onResize = new ResizeObserver(() => {
    if (el.clientWidth && el.clientWidth !== width) { place(); render(); }
  });
  onResize.observe(el);
  window.addEventListener('scroll', schedule, { passive: true });
  window.addEventListener('resize', schedule);

  return {
    el,
    set(tags) {
      groups = groupTags(tags).map(([g, ts]) => ({ g, tags: ts }));
      place();
      render();
    },
    rendered() { return [...live.keys()]; },
    destroy() {
      onResize.disconnect();
      window.removeEventListener('scroll', schedule);
      window.removeEventListener('resize', schedule);
      if (frame) cancelAnimationFrame(frame);
      for (const [tag, node] of live) drop(tag, node);
      live.clear();
      heads.clear();
      el.replaceChildren();
    },
  };
}
