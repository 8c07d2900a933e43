// pane.js — the side pane of the Graphs page: everything about the op (or
// scope) clicked. An op: its type, name, device, each output's dtype and
// shape, its attributes, its inputs and consumers as links, the ops a
// fused node stands for, and its compute time with its share of the step.
// A scope: how many ops of which types, their time and memory.

import { h } from '../core/dom.js';
import { fmtBytes } from './colour.js';
import { outputBytes, shapeText } from './hierarchy.js';

const fmtUs = (us) => (us >= 1000 ? `${(us / 1000).toFixed(2)} ms` : `${us.toFixed(1)} µs`);

function row(label, ...value) {
  return h('tr', null, h('th', null, label), h('td', null, ...value));
}

function section(title, ...content) {
  return h('section.pane-section', null, h('h4', null, title), ...content);
}

// A link that reveals the op (or an unknown input as plain text).
function nodeLink(node, text, go) {
  if (!node) return h('span.muted', null, text);
  return h('a.pane-link', { href: '#', 'data-name': node.name, title: node.op,
    onclick: (e) => { e.preventDefault(); go(node); } }, text);
}

// step: the mean profiled step in µs (0: none). timeUs is per step.
function compute(item, step) {
  if (item.timeUs === null || item.timeUs === undefined || (item.kind === 'group' && !step)) {
    return section('Compute time', h('div.muted', null, 'not profiled (trace_on with profile, or op timing on)'));
  }
  const share = step ? (100 * item.timeUs) / step : null;
  return section('Compute time', h('table.pane-table', null,
    row('per step', fmtUs(item.timeUs)),
    item.kind === 'node' ? row('runs timed', String(item.calls)) : null,
    item.kind === 'node' ? row('total', fmtUs(item.totalUs)) : null,
    share === null ? null : row('share of step', h('span.share', null, `${share.toFixed(1)}%`),
      h('span.share-bar', null, h('span', { style: { width: `${Math.min(100, share)}%` } })))));
}

const perSample = (o) => (o.shape.some((d) => d < 0) ? ' per sample' : '');
// Attributes come by name, as the op declares them ({axes: [2], keepdims:
// true, padding: "SAME", variable: "dense/kernel"}): a name or a variable
// shows as itself, lists and numbers as the graph text writes them.
const attrText = (v) => (typeof v === 'string' ? v : JSON.stringify(v));

function attrsTable(attrs) {
  const entries = Object.entries(attrs || {});
  if (!entries.length) return h('div.muted', null, 'none');
  return h('table.pane-table.attrs', null, ...entries.map(([k, v]) => row(k, h('code', null, attrText(v)))));
}

export function nodePane(n, total, go) {
  const consumers = [...new Map(n.consumers.map((c) => [c.node.name, c])).values()];
  return h('div.pane-body', { 'data-name': n.name },
    h('div.pane-kicker', null, n.op),
    h('h3.pane-title', null, n.name),
    h('table.pane-table', null, row('op type', n.op), row('device', n.device), row('scope', n.scope || '(top level)')),
    section(`Outputs (${n.outputs.length})`, n.outputs.length ? h('table.pane-table.outputs', null,
      ...n.outputs.map((o, k) => row(`:${k}`, h('code', null, `${o.dtype}[${o.shape.join(',')}]`), h('span.muted', null, ` ${shapeText(o.shape)} · ${fmtBytes(outputBytes(o))}${perSample(o)}`))))
      : h('div.muted', null, 'none (runs for its effect)')),
    n.fused?.length ? section(`Fused ops (${n.fused.length})`, h('ol.pane-list', null, ...n.fused.map((f) => h('li', null, h('code', null, f.op), ' ', f.name)))) : null,
    section(`Inputs (${n.ins.length})`, n.ins.length ? h('ul.pane-list.inputs', null,
      ...n.ins.map((i) => h('li', null, nodeLink(i.node, i.name, go), i.control ? h('span.muted', null, ' (control)') : null)))
      : h('div.muted', null, 'none')),
    section(`Consumers (${consumers.length})`, consumers.length ? h('ul.pane-list.consumers', null,
      ...consumers.map((c) => h('li', null, nodeLink(c.node, c.node.name, go))))
      : h('div.muted', null, 'none')),
    n.consts.length ? section(`Constants beside it (${n.consts.length})`, h('ul.pane-list', null,
      ...n.consts.map((c) => h('li', null, c.name, h('span.muted', null, ` ${c.outputs[0] ? shapeText(c.outputs[0].shape) : ''}`))))) : null,
    section('Attributes', attrsTable(n.attrs)),
    compute(n, total));
}

export function scopePane(g, total, toggle, isOpen) {
  const ops = [...g.ops].sort((a, b) => b[1] - a[1]);
  return h('div.pane-body', { 'data-path': g.path },
    h('div.pane-kicker', null, 'name scope'),
    h('h3.pane-title', null, g.path),
    h('table.pane-table', null, row('ops inside', g.count.toLocaleString('en-US')),
      row('output memory', `${fmtBytes(g.bytes)}${g.perSample ? ' (per sample where the batch is unknown)' : ''}`),
      row('devices', [...g.devices].join(', '))),
    h('button.small', { type: 'button', onclick: () => toggle(g) }, isOpen ? 'Close scope' : 'Open scope'),
    section('Op types', h('table.pane-table', null, ...ops.slice(0, 12).map(([op, n]) => row(op, String(n))))),
    compute(g, total));
}
