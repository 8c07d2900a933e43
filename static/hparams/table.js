// table.js — the HParams table: a row per run, a column per hparam and
// metric, sorted by a click on a header (again: the other way), filtered
// per column by what is typed under its header (model.js parseFilter),
// columns hidden from the sidebar. A row's checkbox is the run's box in
// the shared run selector; its name opens the run's Scalars.
//
// Only the rows in the table's scrolled window are in the page (spacer
// rows stand for the others), each made once when first shown and kept:
// a sweep of a thousand runs opens at once, and a brush or a sort only
// picks which rows are in the window.

import { fmtValue, h } from '../core/dom.js';
import { parseFilter, STATUS_LABEL } from './model.js';

export class Table {
  constructor(model, env) {
    this.model = model;
    this.env = env;           // {runs (the selector), hidden: Set(key), onFilter(), openScalars(run)}
    this.sort = null;         // {key, dir: 1 | -1}
    this.rows = new Map();    // run -> {tr, cells: Map(key -> td), box}, made when first shown
    this.ordered = [];        // every run, in the sort's order
    this.shown = [];          // those the filters leave
    this.el = h('div.hp-table-wrap', { onscroll: () => this.scrolled() });
    this.topPad = h('tr.hp-pad');
    this.bottomPad = h('tr.hp-pad');
  }

  // Rebuilds the rows, and the header too when the columns or the sort
  // changed (a live update leaves the filter being typed in alone).
  render() {
    const cols = this.visibleColumns();
    const shape = JSON.stringify([cols.map((c) => c.key), this.sort, this.model.mode]);
    if (this.table && shape === this.shape) { this.renderRows(cols); return; }
    this.shape = shape;
    const head = h('tr', null, h('th.hp-sel', null, ''), this.header('run', 'Run'),
      this.header('status', 'Status'), cols.map((c) => this.header(c.key, c.label, c)));
    const filters = h('tr.hp-filters', null, h('th'), h('th'), h('th'),
      cols.map((c) => h('th', null, h('input.hp-filter', {
        type: 'search', placeholder: c.numeric ? 'a..b, >=x' : 'text', 'data-key': c.key, spellcheck: false,
        value: this.model.filters.get(c.key)?.text ?? '',
        oninput: (e) => {
          const f = parseFilter(e.target.value);
          if (f) this.model.filters.set(c.key, f); else this.model.filters.delete(c.key);
          this.env.onFilter();
        },
      }))));
    this.body = h('tbody');
    this.table = h('table.hp-table', null, h('thead', null, head, filters), this.body);
    this.el.replaceChildren(this.table);
    this.renderRows(cols);
  }

  renderRows(cols) {
    this.cols = cols;
    this.rows.clear();
    this.order();
    this.applyFilter();
  }

  visibleColumns() { return this.model.columns.filter((c) => !this.env.hidden.has(c.key)); }

  header(key, label, c) {
    const arrow = this.sort?.key === key ? (this.sort.dir > 0 ? ' ▲' : ' ▼') : '';
    return h('th.hp-sortable', {
      'data-key': key, title: c?.kind === 'metric' ? `${c.name} (${this.model.mode}${c.higherIsBetter ? ', higher is better' : ', lower is better'})` : label,
      onclick: () => {
        // First click: the best first (a metric that is better higher sorts descending).
        this.sort = { key, dir: this.sort?.key === key ? -this.sort.dir : (c?.kind === 'metric' && c.higherIsBetter ? -1 : 1) };
        this.render();
      },
    }, label, arrow);
  }

  row(r, cols) {
    const box = h('input', { type: 'checkbox', checked: this.env.runs.runs.get(r.name)?.checked ?? false,
      title: 'Selected on every page', onchange: () => this.env.runs.setChecked(r.name, box.checked) });
    const cells = new Map();
    const tr = h('tr', { 'data-run': r.name }, h('td.hp-sel', null, box),
      h('td.hp-run', null, h('span.swatch', { style: { background: this.env.runs.color(r.name) } }),
        h('a', { href: '#scalars', title: `${r.name}: open its Scalars`,
          onclick: (e) => { e.preventDefault(); this.env.openScalars(r.name); } }, r.name)),
      h('td', { className: `hp-status hp-status-${r.status || 'unknown'}` }, STATUS_LABEL[r.status] ?? r.status));
    for (const c of cols) {
      const v = r.values.get(c.key);
      const td = h('td.hp-num', null, typeof v === 'number' ? fmtValue(v) : v ?? '–');
      if (typeof v !== 'number') td.className = 'hp-text';
      cells.set(c.key, td);
      tr.append(td);
    }
    return { tr, cells, box };
  }

  sortValue(r, key) {
    if (key === 'run') return r.name;
    if (key === 'status') return r.status;
    return r.values.get(key);
  }

  // The runs in the sort's order (missing and NaN values last).
  order() {
    const runs = [...this.model.runs];
    if (this.sort) {
      const { key, dir } = this.sort;
      runs.sort((a, b) => {
        const x = this.sortValue(a, key), y = this.sortValue(b, key);
        const xm = x === null || x === undefined || Number.isNaN(x), ym = y === null || y === undefined || Number.isNaN(y);
        if (xm || ym) return xm - ym;
        if (typeof x === 'number' && typeof y === 'number') return dir * (x - y);
        return dir * String(x).localeCompare(String(y));
      });
    }
    this.ordered = runs;
  }

  // The filters moved: which runs are shown; the window drawn again.
  applyFilter() {
    this.shown = this.ordered.filter((r) => this.model.passes(r));
    this.drawWindow();
    return this.shown.length;
  }

  scrolled() {
    if (this.pending) return;
    this.pending = requestAnimationFrame(() => { this.pending = 0; this.drawWindow(); });
  }

  // The rows in view (and a screenful around them) between two spacers.
  drawWindow() {
    if (!this.body) return;
    const rowH = this.rowHeight ||= 26;
    const view = Math.max(this.el.clientHeight, 460);   // the wrap grows to 460 px as rows come
    const first = Math.max(0, Math.floor(this.el.scrollTop / rowH) - 10);
    const last = Math.min(this.shown.length, first + Math.ceil(view / rowH) + 20);
    const trs = [];
    for (let i = first; i < last; i++) {
      const r = this.shown[i];
      let row = this.rows.get(r.name);
      if (!row) this.rows.set(r.name, row = this.row(r, this.cols));
      row.box.checked = this.env.runs.runs.get(r.name)?.checked ?? false;
      trs.push(row.tr);
    }
    if (!this.measured && trs.length) {   // the real height, once the first rows are in
      this.body.replaceChildren(trs[0]);
      this.rowHeight = trs[0].offsetHeight || rowH;
      this.measured = true;
    }
    this.topPad.style.height = `${first * this.rowHeight}px`;
    this.bottomPad.style.height = `${(this.shown.length - last) * this.rowHeight}px`;
    this.body.replaceChildren(this.topPad, ...trs, this.bottomPad);
  }
}
