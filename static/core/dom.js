// dom.js — tiny DOM helpers shared by every page: element creation
// (text is always set as textContent, never parsed as HTML), downloads,
// and number/time formatting.

// h('div.card', {title: 'x', onclick: fn}, child, 'text', ...)
export function h(spec, attrs, ...children) {
  const [tag, ...classes] = spec.split('.');
  const el = document.createElement(tag || 'div');
  if (classes.length) el.className = classes.join(' ');
  if (attrs) {
    for (const [k, v] of Object.entries(attrs)) {
      if (v === undefined || v === null || v === false) continue;
      if (k.startsWith('on')) el.addEventListener(k.slice(2), v);
      else if (k === 'style') Object.assign(el.style, v);
      else if (k in el && k !== 'list' && k !== 'type') el[k] = v;
      else el.setAttribute(k, v === true ? '' : v);
    }
  }
  for (const c of children.flat()) {
    if (c === null || c === undefined || c === false) continue;
    el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return el;
}

// Fills a <select> with one option per value (label(v) its text), the
// current one selected; redone only when the values or the choice
// changed, so a live update does not close a list the person has open.
export function fillSelect(select, values, current, label = (v) => v) {
  const sig = JSON.stringify([values, current]);
  if (select.dataset.sig === sig) return;
  select.dataset.sig = sig;
  select.replaceChildren(...values.map((v) => h('option', { value: v, selected: String(v) === String(current) }, label(v))));
}

export function download(filename, text, type) {
  const url = URL.createObjectURL(new Blob([text], { type }));
  const a = h('a', { href: url, download: filename });
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 1000);
}

// A regex from user input, or null (and the input marked) when invalid.
export function regexFrom(input) {
  try {
    const re = new RegExp(input.value, 'i');
    input.classList.remove('invalid');
    return re;
  } catch {
    input.classList.add('invalid');
    return null;
  }
}

// "NaN"/"Infinity"/"-Infinity" strings from the API back to numbers.
export function num(v) {
  if (typeof v === 'number') return v;
  if (v === 'NaN') return NaN;
  if (v === 'Infinity') return Infinity;
  if (v === '-Infinity') return -Infinity;
  return v === null ? null : Number(v);
}

export function fmtValue(v) {
  if (v === null || v === undefined) return '–';
  if (Number.isNaN(v)) return 'NaN';
  if (v === Infinity) return '+Inf';
  if (v === -Infinity) return '-Inf';
  const a = Math.abs(v);
  if (a !== 0 && (a < 1e-3 || a >= 1e6)) return v.toExponential(3);
  return Number(v.toPrecision(5)).toString();
}

export function fmtDuration(seconds) {
  const s = Math.abs(seconds);
  if (s < 60) return `${seconds.toFixed(s < 10 ? 1 : 0)}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m ${Math.round(s % 60)}s`;
  if (s < 86400) return `${Math.floor(s / 3600)}h ${Math.round((s % 3600) / 60)}m`;
  return `${(s / 86400).toFixed(1)}d`;
}

export function fmtWall(seconds) {
  const d = new Date(seconds * 1000);
  return d.toLocaleString(undefined, { hour12: false });
}

export function safeFileName(s) {
  return s.replace(/[^A-Za-z0-9._-]+/g, '_').slice(0, 80);
}

// Calls fn at most once per `ms` (trailing call kept).
export function throttle(fn, ms) {
  let timer = null, pending = false;
  return function run() {
    if (timer) { pending = true; return; }
    fn();
    timer = setTimeout(() => { timer = null; if (pending) { pending = false; run(); } }, ms);
  };
}

// Tags grouped by their first path component ("train/loss" -> "train"),
// as TensorBoard does; tags without a "/" form the unnamed first group.
export function groupTags(tags) {
  const groups = new Map();
  for (const t of tags) {
    const g = t.includes('/') ? t.slice(0, t.indexOf('/')) : '';
    if (!groups.has(g)) groups.set(g, []);
    groups.get(g).push(t);
  }
  return [...groups.entries()].sort(([a], [b]) => (a === '' ? -1 : b === '' ? 1 : a.localeCompare(b)));
}

// The sections of a card grid: a heading per named group, then its cards.
// "1 thread", "3 threads", "1,204 matches": a count with its noun in the
// number it takes (many: the plural when it is not word + "s").
export function counted(n, word, many = `${word}s`) {
  return `${n.toLocaleString('en-US')} ${n === 1 ? word : many}`;
}

// "1 step (0)", "40 steps, 0–39": how many steps a chart holds, and where.
export function stepsLabel(n, first, last) {
  return n === 1 ? `1 step (${first})` : `${n} steps, ${first}–${last}`;
}

export function groupedCards(tags, cardOf) {
  return groupTags(tags).map(([g, ts]) => h('section.group', { 'data-group': g },
    g ? h('h2.group-title', null, g, h('span.muted', null, ` · ${ts.length}`)) : null,
    h('div.cards', null, ts.map(cardOf))));
}

// Tracks which cards are on (or near) the screen, so pages fetch and
// update only those: a store with hundreds of tags stays fast. Cards are
// checked at once when observed (no wait for the first observer callback);
// onShow(key) runs when a card comes into view. A card near the screen has
// the class "near", so a page's CSS can skip laying out the others.
export function visibility(onShow, margin = 400) {
  const shown = new Set();
  const io = new IntersectionObserver((entries) => {
    for (const e of entries) {
      const key = e.target.dataset.tag;
      e.target.classList.toggle('near', e.isIntersecting);
      if (e.isIntersecting && !shown.has(key)) { shown.add(key); onShow(key); }
      else if (!e.isIntersecting) shown.delete(key);
    }
  }, { rootMargin: `${margin}px 0px` });
  return {
    has: (key) => shown.has(key),
    observe(el) {
      // "near" comes with the observer's first callback, not here: a class
      // set between two cards' measurements would lay the page out again
      // for each (10,000 cards: seconds).
      const r = el.getBoundingClientRect();
      // (an element not in the page yet has no place: its callback says)
      if (el.isConnected && r.bottom > -margin && r.top < window.innerHeight + margin) shown.add(el.dataset.tag);
      io.observe(el);
    },
    unobserve(el) { io.unobserve(el); shown.delete(el.dataset.tag); },
    disconnect() { io.disconnect(); },
  };
}
