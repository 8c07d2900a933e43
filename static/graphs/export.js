// export.js — the graph as a standalone SVG file (TensorBoard's graph
// plugin has no such export: tensorboard#66). The drawing is cloned with
// every style the page's CSS gave it written as SVG presentation
// attributes (not style="": the page's CSP forbids inline styles), framed to the whole
// laid-out graph rather than to the part on screen, so the file looks the
// same in any viewer.

const STYLED = ['fill', 'fill-opacity', 'stroke', 'stroke-width', 'stroke-dasharray', 'stroke-opacity',
  'opacity', 'font-family', 'font-size', 'font-weight', 'text-anchor', 'dominant-baseline'];

// Copies the computed styles of live onto copy, element by element (the
// two trees have the same shape).
function inlineStyles(live, copy) {
  const cs = getComputedStyle(live);
  for (const p of STYLED) {
    const v = cs.getPropertyValue(p);
    if (v) copy.setAttribute(p, v);
  }
  for (let i = 0; i < live.children.length; i++) inlineStyles(live.children[i], copy.children[i]);
}

export function svgFile(svg, layer, scene, margin = 20) {
  const out = svg.cloneNode(true);
  const content = out.querySelector('g.viewport');
  inlineStyles(layer, content);
  content.removeAttribute('transform');
  const w = Math.ceil(scene.width + 2 * margin), h = Math.ceil(scene.height + 2 * margin);
  out.setAttribute('xmlns', 'http://www.w3.org/2000/svg');
  out.setAttribute('viewBox', `${-margin} ${-margin} ${w} ${h}`);
  out.setAttribute('width', String(w));
  out.setAttribute('height', String(h));
  out.removeAttribute('class');
  out.removeAttribute('id');
  // The arrowhead's colour, which CSS gave it on the page.
  const arrow = out.querySelector('marker path');
  const liveArrow = svg.querySelector('marker path');
  if (arrow && liveArrow) arrow.setAttribute('fill', getComputedStyle(liveArrow).fill);
  return `<?xml version="1.0" encoding="UTF-8"?>\n${new XMLSerializer().serializeToString(out)}\n`;
}
