// markers.js — NaN and ±Inf values on a Scalars chart, which a line cannot
// show: a marker each (+Inf a triangle at the top edge, -Inf one at the
// bottom, NaN a dot just below the top), drawn over the chart. A marker of
// a run with numerics alerts is a link: a click opens the Numerics page at
// its run and step (the bucket's steps when downsampled).

import { openNumerics } from '../core/numerics-link.js';

// The markers of the drawn parts ([{run, s, x}]), in the runs' colours.
export function collectMarkers(parts, colorOf) {
  const markers = [];
  for (const { run, s, x } of parts) {
    for (let i = 0; i < s.step.length; i++) {
      const kind = nonFinite(s, i);
      if (kind) markers.push({ x: x[i], kind, color: colorOf(run), run, step: s.step[i], stepLast: s.step_last[i] });
    }
  }
  return markers;
}

// 'nan', 'posinf', 'neginf' when row i holds one (a bucket's counts, or
// the value itself), else null.
function nonFinite(s, i) {
  const v = s.value[i];
  if (!(s.nan[i] || s.posinf[i] || s.neginf[i] || (v !== null && !Number.isFinite(v)))) return null;
  return s.nan[i] || Number.isNaN(v) ? 'nan' : s.posinf[i] || v === Infinity ? 'posinf' : 'neginf';
}

// A marker's place in canvas pixels.
function markerY(u, m) {
  const { top, height } = u.bbox;
  return m.kind === 'neginf' ? top + height - 7 : m.kind === 'posinf' ? top + 7 : top + 19;
}

// A uPlot draw hook: the markers inside the x range.
export function drawMarkers(u, markers) {
  const c = u.ctx;
  const { left, width } = u.bbox;
  c.save();
  c.strokeStyle = '#b71c1c';
  c.lineWidth = 1.5;
  for (const m of markers) {
    const x = u.valToPos(m.x, 'x', true);
    if (x < left - 1 || x > left + width + 1) continue;
    c.fillStyle = m.color;
    c.beginPath();
    markerPath(c, m.kind, x, markerY(u, m));
    c.fill();
    c.stroke();
  }
  c.restore();
}

function markerPath(c, kind, x, y) {
  if (kind === 'nan') { c.arc(x, y, 4.5, 0, 2 * Math.PI); return; }
  const d = kind === 'posinf' ? -1 : 1;   // the triangle points off the chart
  c.moveTo(x, y + 5 * d); c.lineTo(x - 5, y - 4 * d); c.lineTo(x + 5, y - 4 * d); c.closePath();
}

// The linked marker under the mouse (within 8 CSS pixels of its centre), or null.
function linkedMarkerAt(u, markers, linked, e) {
  const ratio = u.over.getBoundingClientRect().width / (u.bbox.width || 1) || 1;
  let best = null, bestD = 64;
  for (const m of markers) {
    if (!linked(m.run)) continue;
    const dx = e.offsetX - u.valToPos(m.x, 'x'), dy = e.offsetY - (markerY(u, m) - u.bbox.top) * ratio;
    const d = dx * dx + dy * dy;
    if (d <= bestD) { best = m; bestD = d; }
  }
  return best;
}

// A click (not the end of a drag) on a linked marker opens the Numerics
// page; the pointer says so while over one. markers() is read at each
// event: the chart keeps its listeners across redraws.
export function followMarkerLinks(u, markers, linked) {
  let down = null;
  const at = (e) => linkedMarkerAt(u, markers(), linked, e);
  u.over.addEventListener('mousedown', (e) => { down = [e.clientX, e.clientY]; });
  u.over.addEventListener('mousemove', (e) => { u.over.classList.toggle('over-link', !!at(e)); });
  u.over.addEventListener('click', (e) => {
    if (down && Math.hypot(e.clientX - down[0], e.clientY - down[1]) > 3) return;
    const m = at(e);
    if (m) openNumerics(m.run, m.step, m.stepLast);
  });
}
