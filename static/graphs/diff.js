// diff.js — what the graph passes did to one concrete function, read off
// its two stages: each op of the graph as traced that they removed
// (pruned, or simplified away), merged into an identical op (common
// subexpressions), folded into a constant, or fused into an elementwise
// loop; and each op of the optimized graph that a fold or a fusion made.
// The passes keep names (a folded op becomes a Const under its own name,
// a fused chain takes its root's name and lists the others), so names
// match the two stages; merges are found by replaying the merge rule: same
// op, attributes, output and inputs (after earlier merges) as an op that
// survived.

export const CHANGES = ['removed', 'merged', 'folded', 'fused'];

const nameOf = (input) => input.replace(/:\d+$/, '');

// {before: Map(name -> change), after: Map(name -> change), counts}.
export function stageDiff(traced, optimized) {
  const before = new Map(), after = new Map();
  const canon = new Map();       // a merged op's name -> the op it became
  const survivors = new Map();   // merge key -> name
  const keyOf = (n) => `${n.op}|${JSON.stringify(n.attrs ?? {})}|${JSON.stringify(n.outputs)}|` +
    n.inputs.map((i) => { const u = nameOf(i); return `${canon.get(u) ?? u}${i.slice(u.length)}`; }).join(',');
  for (const n of traced.nodes) {
    const o = optimized.byName.get(n.name);
    const key = keyOf(n);
    if (o) {
      if (o.op !== n.op && o.op === 'Const') { before.set(n.name, 'folded'); after.set(o.name, 'folded'); }
      else if (o.op !== n.op && o.fused?.length) { before.set(n.name, 'fused'); after.set(o.name, 'fused'); }
      if (!survivors.has(key)) survivors.set(key, n.name);
    } else if (optimized.fusedIn.has(n.name)) {
      before.set(n.name, 'fused');
      after.set(optimized.fusedIn.get(n.name).name, 'fused');
    } else if (survivors.has(key)) {
      before.set(n.name, 'merged');
      canon.set(n.name, survivors.get(key));
    } else {
      before.set(n.name, 'removed');
    }
  }
  const counts = Object.fromEntries(CHANGES.map((c) => [c, 0]));
  for (const c of before.values()) counts[c]++;
  return { before, after, counts };
}

// How many ops under each scope of model changed (by changes: name ->
// change), for the badge on a closed scope.
export function changesPerScope(model, changes) {
  const per = new Map();
  for (const [name] of changes) {
    const n = model.byName.get(name);
    for (let g = n?.parent; g; g = g.parent) per.set(g.key, (per.get(g.key) ?? 0) + 1);
  }
  return per;
}
