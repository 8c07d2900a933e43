// The Text dashboard: per tag and run, the texts by step (newest first),
// rendered as markdown (headings, emphasis, lists, tables, code, links),
// safely: see markdown.js.

import { getJSON } from '../core/api.js';
import { fmtWall, h } from '../core/dom.js';
import { runLabel, tagPage } from '../core/tagpage.js';
import { renderMarkdown } from './markdown.js';
import './text.css';

export const name = 'text';

export function createPage(ctx) {
  return tagPage(ctx, { plugin: 'text', noun: 'text', block: (run, tag) => {
    const list = h('div.text-list');
    const el = h('div.run-block', { 'data-run': run }, runLabel(ctx, run), list);
    const load = async () => {
      const r = await getJSON('text/series', { run, tag, points: 200 });
      el.dataset.entries = String(r.rows.length);
      list.replaceChildren(...r.rows.slice().reverse().map((row) => h('div.text-entry', { 'data-step': row.step },
        h('div.text-step', { title: fmtWall(row.wall) }, `step ${row.step}`),
        h('div.text-body.markdown', null, renderMarkdown(row.text)))));
      return r.rows.length;
    };
    return { el, load };
  } });
}
