// runs.js — the run selector shared by every page: the list of runs with a
// checkbox and a colour each, a regex filter, all/none. A run's colour is
// fixed the first time the page sees it, so it never changes while the
// page is open, and every chart of every dashboard uses the same one.

import { h, regexFrom } from './dom.js';

// Distinct, print-safe colours (TensorBoard's palette, extended).
const PALETTE = ['#1a73e8', '#e8710a', '#188038', '#d93025', '#9334e6', '#12b5cb',
  '#e52592', '#f9ab00', '#425066', '#7cb342', '#00897b', '#a142f4', '#795548', '#3949ab'];

export class Runs {
  constructor({ list, filter, count, all, none }) {
    this.list = list;
    this.filter = filter;
    this.count = count;
    this.runs = new Map();        // name -> {name, color, checked, info}
    this.seen = 0;                // runs ever listed: the next colour
    this.listeners = [];
    this.re = /(?:)/;
    filter.addEventListener('input', () => {
      const re = regexFrom(filter);
      if (re) { this.re = re; this.render(); this.changed(); }
    });
    all.addEventListener('click', () => this.setAll(true));
    none.addEventListener('click', () => this.setAll(false));
  }

  onChange(fn) { this.listeners.push(fn); }
  changed() { for (const fn of this.listeners) fn(); }

  // Takes the runs of /api/runs: new ones added, those gone (a store
  // removed from a logdir) dropped; true when the list changed. Colours
  // are handed out in order of first sight and never reused, so a run
  // keeps its colour whatever comes and goes.
  update(apiRuns) {
    let changed = false;
    const now = new Set(apiRuns.map((r) => r.name));
    for (const name of [...this.runs.keys()]) {
      if (!now.has(name)) { this.runs.delete(name); changed = true; }
    }
    for (const r of apiRuns) {
      const known = this.runs.get(r.name);
      if (known) { known.info = r; continue; }
      const color = PALETTE[this.seen++ % PALETTE.length];
      this.runs.set(r.name, { name: r.name, color, checked: true, info: r });
      changed = true;
    }
    if (changed) this.render();
    return changed;
  }

  color(name) { return this.runs.get(name)?.color ?? '#888'; }
  info(name) { return this.runs.get(name)?.info; }

  // The runs to draw: checked and matching the filter, in name order.
  selected() {
    return [...this.runs.values()].filter((r) => r.checked && this.re.test(r.name)).map((r) => r.name);
  }

  // One run's box, as if clicked (the HParams table's boxes are these).
  setChecked(name, on) {
    const r = this.runs.get(name);
    if (!r || r.checked === on) return;
    r.checked = on;
    this.render();
    this.changed();
  }

  // Exactly these runs checked, every other one not (and the filter
  // cleared, so none of them is hidden).
  setSelected(names) {
    const want = new Set(names);
    for (const r of this.runs.values()) r.checked = want.has(r.name);
    this.filter.value = '';
    this.re = /(?:)/;
    this.render();
    this.changed();
  }

  setAll(on) {
    for (const r of this.runs.values()) if (this.re.test(r.name)) r.checked = on;
    this.render();
    this.changed();
  }

  render() {
    const visible = [...this.runs.values()].filter((r) => this.re.test(r.name));
    this.count.textContent = `${visible.length}/${this.runs.size}`;
    this.list.replaceChildren(...visible.map((r) => {
      const box = h('input', { type: 'checkbox', checked: r.checked,
        onchange: () => { r.checked = box.checked; this.changed(); } });
      const hp = Object.entries(r.info?.hparams ?? {}).map(([k, v]) => `${k}=${v}`).join('\n');
      return h('label.run', { title: hp ? `${r.name}\n${hp}` : r.name, 'data-run': r.name },
        box, h('span.swatch', { style: { background: r.color } }), h('span.run-name', null, r.name));
    }));
    if (!visible.length) this.list.append(h('div.muted', null, this.runs.size ? 'No run matches the filter.' : 'No runs yet.'));
  }
}
