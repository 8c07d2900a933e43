// hierarchy.js — a graph as the Graphs page draws it: its nodes in a tree
// of name scopes ("mlp/dense/MatMul" lives in mlp → dense), constants set
// aside beside their consumers, and every edge filed once, under the
// deepest scope that holds both its ends, between the two children of
// that scope it runs between. Drawing a scope then needs only its own
// children and edges: nothing about the rest of the graph, which is what
// lets the page lay out a 10,000-node graph one opened scope at a time.
//
// No scope hands the layout more than MAX_CHILDREN boxes, however the
// graph was named: scopes that differ only by a number and hold the same
// structure (dense_1 … dense_12, the layers of a transformer, unrolled
// loop bodies) collapse into one series group marked ×N, as TensorBoard's
// series do; a scope still too big is cut into parts of consecutive ops
// (the graph's order is the trace's, so parts follow the data flow), each
// opened on its own, as Model Explorer lays out one group at a time.

// Bytes per element of each dtype the engine names.
const DTYPE_BYTES = { float32: 4, float64: 8, int32: 4, int64: 8, uint8: 1, bool: 1, int8: 1, int16: 2, float16: 2 };

// "?×784" for [-1, 784]; "scalar" for [].
export function shapeText(shape) {
  return shape.length ? shape.map((d) => (d < 0 ? '?' : String(d))).join('×') : 'scalar';
}

// Bytes of one output; an unknown dim (the batch) counts as 1, so an
// output with one is measured per sample (perSample on its node).
export function outputBytes(o) {
  return (DTYPE_BYTES[o.dtype] ?? 4) * o.shape.reduce((n, d) => n * (d < 0 ? 1 : d), 1);
}

// "name:2" -> {name, out: 2}; "name" -> {name, out: 0}.
function parseInput(s) {
  const m = /^(.*):(\d+)$/.exec(s);
  return m ? { name: m[1], out: Number(m[2]) } : { name: s, out: 0 };
}

function newGroup(path, parent, label = path.slice(path.lastIndexOf('/') + 1) || '(root)') {
  return {
    kind: 'group', key: `g:${path}`, path, parent, label,
    children: [], edges: new Map(), depth: parent ? parent.depth + 1 : 0,
    count: 0, timeUs: 0, bytes: 0, ops: new Map(), devices: new Set(),
    series: 0, part: false,   // ×N of a series group; a part of a big scope
  };
}

export const MAX_CHILDREN = 200;   // boxes one layout gets, at most
const PART = 100;                  // a big scope's parts hold about this many
const MIN_SERIES = 3;              // repeats before they collapse

// A canonical text of what item holds: op types, nested as its scopes are.
function structure(item, memo) {
  if (item.kind === 'node') return item.op;
  let sig = memo.get(item);
  if (sig === undefined) {
    sig = `(${item.children.map((c) => structure(c, memo)).sort().join(',')})`;
    memo.set(item, sig);
  }
  return sig;
}

// "dense_12" -> ['dense', 12]; "dense" -> ['dense', 0].
function numbered(label) {
  const m = /^(.*?)_?(\d+)$/.exec(label);
  return m && m[1] ? [m[1], Number(m[2])] : [label, 0];
}

// Replaces, among g's children, each run of MIN_SERIES or more scopes of
// the same structure whose names differ only by a number with one series
// group (where the first of them was).
function collapseSeries(g, groups, memo) {
  const sets = new Map();
  for (const c of g.children) {
    if (c.kind !== 'group' || !c.children.length) continue;
    const [base, n] = numbered(c.label);
    const key = `${base}\u0000${structure(c, memo)}`;
    if (!sets.has(key)) sets.set(key, { base, members: [] });
    sets.get(key).members.push({ c, n });
  }
  const into = new Map();
  for (const { base, members } of sets.values()) {
    if (members.length < MIN_SERIES) continue;
    members.sort((a, b) => a.n - b.n);
    const lo = members[0].n, hi = members.at(-1).n;
    const path = `${g.path ? `${g.path}/` : ''}${base}_[${lo}-${hi}]`;
    const series = newGroup(path, g, `${base}_[${lo}–${hi}]`);
    series.series = members.length;
    groups.set(path, series);
    for (const { c } of members) {
      c.parent = series;
      series.children.push(c);
      into.set(c, series);
    }
  }
  if (!into.size) return;
  const placed = new Set();
  g.children = g.children.flatMap((c) => {
    const series = into.get(c);
    if (!series) return [c];
    if (placed.has(series)) return [];
    placed.add(series);
    return [series];
  });
}

// Cuts a scope of more than MAX_CHILDREN children into parts of about
// PART consecutive ones (parts of parts, if need be).
function splitBig(g, groups) {
  while (g.children.length > MAX_CHILDREN) {
    const kids = g.children;
    const count = Math.ceil(kids.length / PART), size = Math.ceil(kids.length / count);
    g.children = [];
    for (let k = 0; k < count; k++) {
      const slice = kids.slice(k * size, (k + 1) * size);
      const path = `${g.path ? `${g.path}/` : ''}[${g.partDepth ?? 0}.${k + 1}]`;
      const part = newGroup(path, g, `part ${k + 1} of ${count}`);
      part.part = true;
      groups.set(path, part);
      for (const c of slice) { c.parent = part; part.children.push(c); }
      g.children.push(part);
    }
    g.partDepth = (g.partDepth ?? 0) + 1;
  }
}

// Series, then parts, scope by scope from the leaves up (a series found
// inside a scope makes it smaller before it is judged too big); depths
// follow the new tree.
function regroup(root, groups) {
  const memo = new Map();
  const walk = (g) => {
    for (const c of g.children) if (c.kind === 'group') walk(c);
    collapseSeries(g, groups, memo);
    splitBig(g, groups);
  };
  walk(root);
  const depths = (g) => {
    for (const c of g.children) {
      c.depth = g.depth + 1;
      if (c.kind === 'group') depths(c);
    }
  };
  depths(root);
}

// profile: {node name: {calls, total_us}} (may be empty).
export function buildHierarchy(graph, profile = {}) {
  const root = newGroup('', null);
  const groups = new Map([['', root]]);
  const byName = new Map();
  const fusedIn = new Map();   // a fused-away op's name -> the fused node
  const outputs = new Set(graph.outputs.map((o) => parseInput(o).name));

  function groupOf(path) {
    let g = groups.get(path);
    if (g) return g;
    const cut = path.lastIndexOf('/');
    const parent = groupOf(cut < 0 ? '' : path.slice(0, cut));
    g = newGroup(path, parent);
    parent.children.push(g);
    groups.set(path, g);
    return g;
  }

  const nodes = graph.nodes.map((n, index) => {
    const cut = n.name.lastIndexOf('/');
    const parent = groupOf(cut < 0 ? '' : n.name.slice(0, cut));
    const p = profile[n.name];
    const node = {
      ...n, kind: 'node', key: `n:${n.name}`, index, parent, depth: parent.depth + 1,
      label: n.name.slice(cut + 1), scope: parent.path, device: n.device || 'CPU:0',
      ins: [], consumers: [], consts: [], extracted: false,
      // timeUs: per step (the mean of its profiled runs); totalUs: all of them.
      calls: p ? p.calls : 0, totalUs: p ? p.total_us : null, timeUs: p && p.calls ? p.total_us / p.calls : null,
      bytes: n.outputs.reduce((s, o) => s + outputBytes(o), 0),
      perSample: n.outputs.some((o) => o.shape.some((d) => d < 0)),
    };
    parent.children.push(node);
    byName.set(n.name, node);
    for (const f of n.fused || []) fusedIn.set(f.name, node);
    return node;
  });

  // Inputs as links both ways; an input naming no node (a damaged graph)
  // is kept as text only.
  for (const v of nodes) {
    const link = (s, control) => {
      const { name, out } = parseInput(s);
      const u = byName.get(name);
      v.ins.push({ name: s, node: u ?? null, out, control });
      if (u) u.consumers.push({ node: v, out, control });
    };
    v.inputs.forEach((s) => link(s, false));
    (v.control || []).forEach((s) => link(s, true));
  }

  // Constants beside their consumers, as TensorBoard draws them: a
  // constant that feeds something and is not an output leaves the layout.
  for (const n of nodes) {
    if (n.op !== 'Const' || !n.consumers.length || outputs.has(n.name)) continue;
    n.extracted = true;
    for (const c of n.consumers) if (!c.node.consts.includes(n)) c.node.consts.push(n);
  }
  for (const g of groups.values()) g.children = g.children.filter((c) => !c.extracted);
  regroup(root, groups);

  // Totals per scope, for its box, its pane and colour by time or memory.
  for (const n of nodes) {
    for (let g = n.parent; g; g = g.parent) {
      g.count++;
      g.timeUs += n.timeUs ?? 0;
      g.bytes += n.bytes;
      g.perSample ||= n.perSample;
      g.ops.set(n.op, (g.ops.get(n.op) ?? 0) + 1);
      g.devices.add(n.device);
    }
  }

  for (const v of nodes) for (const i of v.ins) if (i.node && !i.node.extracted) fileEdge(i.node, v, i);

  // The profiled step: how many runs were timed (every node of a step
  // runs once per step), and the mean step as the sum of the nodes' means.
  const steps = nodes.reduce((m, n) => Math.max(m, n.calls), 0);
  return { root, groups, nodes, byName, fusedIn, outputs, steps, stepUs: steps ? root.timeUs : 0 };
}

// The chain root → … → item.
function chain(item) {
  const out = [];
  for (let x = item; x; x = x.parent) out.push(x);
  return out.reverse();
}

// Files edge u → v under the deepest scope holding both, between the two
// children of that scope it joins; edges between the same two children
// share one record (a "meta-edge": count, bytes, the edges it stands for).
function fileEdge(u, v, input) {
  const a = chain(u), b = chain(v);
  let k = 0;
  while (k < a.length && k < b.length && a[k] === b[k]) k++;
  const scope = a[k - 1], from = a[k], to = b[k];
  const id = `${from.key}>${to.key}`;
  let e = scope.edges.get(id);
  if (!e) {
    e = { id, from, to, count: 0, bytes: 0, control: true, shape: null, base: [] };
    scope.edges.set(id, e);
  }
  const o = u.outputs[input.out];
  e.count++;
  e.control &&= input.control;
  if (!input.control && o) {
    e.bytes += outputBytes(o);
    e.shape ??= o.shape;
  }
  e.base.push({ u, v, out: input.out, control: input.control });
}

// Every node n depends on, through data and control edges.
export function transitiveInputs(n) {
  const seen = new Set([n]);
  const stack = [n];
  while (stack.length) {
    const x = stack.pop();
    for (const i of x.ins) {
      if (i.node && !seen.has(i.node)) {
        seen.add(i.node);
        stack.push(i.node);
      }
    }
  }
  return seen;
}

// The node a name points at: the node itself, or the fused node that
// swallowed an op of that name (a numerics alert inside a fused node
// names the fused step).
export function findNode(model, name) {
  return model.byName.get(name) ?? model.fusedIn.get(name) ?? null;
}

// The scope of a layer named `name` ("dense_1", or a path "model/dense_1"):
// a scope whose path is the name or ends with "/<name>", the forward one
// before those under gradients/, the outermost first. null when none.
export function findScope(model, name) {
  let best = null, bestRank = null;
  for (const g of model.groups.values()) {
    if (g.series || g.part || !g.parent) continue;
    if (g.path !== name && !g.path.endsWith(`/${name}`)) continue;
    const rank = [/(^|\/)gradients(\/|$)/.test(g.path) ? 1 : 0, g.depth];
    if (!best || rank[0] < bestRank[0] || (rank[0] === bestRank[0] && rank[1] < bestRank[1])) {
      best = g;
      bestRank = rank;
    }
  }
  return best;
}

export function ancestors(item) {
  const out = [];
  for (let g = item.parent; g; g = g.parent) out.push(g);
  return out;
}
