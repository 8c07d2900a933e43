// table.js — the HParams table: a row per run, a column per hparam and
// metric, sorted by a click on a header (again: the other way), filtered
// per column by what is typed under its header (model.js parseFilter),
// columns hidden from the sidebar. A row's checkbox is the run's box in
// the shared run selector; its name opens the run's Scalars.
//
// Rows are made once per run and kept: a filter or a brush only shows or
// hides them, a sort only moves them, so a thousand rows follow a brush.

import { fmtValue, h } from '../core/dom.js';
import { parseFilter, STATUS_LABEL } from './model.js';

export class Table {
  constructor(model, env) {
    this.model = model;
    this.env = env;           // {runs (the selector), hidden: Set(key), onFilter(), openScalars(run)}
    this.sort = null;         // {key, dir: 1 | -1}
    this.rows = new Map();    // run -> {tr, cells: Map(key -> td), box}
    this.el = h('div.hp-table-wrap');
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
    this.rows.clear();
    this.body.replaceChildren();
    for (const r of this.model.runs) this.rows.set(r.name, this.row(r, cols));
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

  // Puts the rows in the sort's order (missing and NaN values last).
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
    for (const r of runs) this.body.append(this.rows.get(r.name).tr);
  }

  applyFilter() {
    let shown = 0;
    for (const r of this.model.runs) {
      const ok = this.model.passes(r);
      const row = this.rows.get(r.name);
      row.tr.hidden = !ok;
      row.box.checked = this.env.runs.runs.get(r.name)?.checked ?? false;
      shown += ok;
    }
    return shown;
  }
}
