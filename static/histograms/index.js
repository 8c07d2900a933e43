// The Histograms dashboard: per tag and run, the histograms of the last
// steps drawn as an offset (ridge) plot — older steps behind and above,
// newer in front — or overlaid on one baseline (ridge.js draws them).
// Hovering picks a step and shows its statistics.

import { getJSON } from '../core/api.js';
import { h, num, stepsLabel } from '../core/dom.js';
import { runLabel, tagPage } from '../core/tagpage.js';
import { drawHistograms, pick, plotHeight } from './ridge.js';

export const name = 'histograms';

const STEPS = 40;          // histograms drawn per run
const settings = { mode: 'offset' };

export function createPage(ctx) {
  // Cards in a grid, as on Scalars: each as tall as what it draws.
  const page = tagPage(ctx, { plugin: 'histograms', controls: modeControls(() => page.redraw()), noun: 'histogram',
    wide: false, block: (run, tag) => histogramBlock(ctx, run, tag), blockHeight: () => plotHeight(settings.mode) });
  return page;
}

// Offset / Overlay buttons; the mode survives tab switches.
function modeControls(redraw) {
  const buttons = ['offset', 'overlay'].map((m) => h('button.small', {
    type: 'button', id: `mode-${m}`, className: `small${settings.mode === m ? ' on' : ''}`,
    onclick: () => {
      settings.mode = m;
      for (const b of buttons) b.classList.toggle('on', b.id === `mode-${m}`);
      redraw();
    } }, m === 'offset' ? 'Offset' : 'Overlay'));
  return h('div', null, h('div.section-title', null, 'Histogram mode'), h('div.radios', null, ...buttons));
}

const parse = (x) => ({ ...x, min: num(x.min), max: num(x.max), edges: x.edges.map(num), counts: x.counts.map(num) });

// One run's histograms of one tag: a canvas redrawn on resize and hover.
function histogramBlock(ctx, run, tag) {
  const canvas = h('canvas.hist-canvas');
  const info = h('span.muted');
  const el = h('div.run-block', { 'data-run': run }, runLabel(ctx, run, info), canvas);
  let hist = [];
  let hover = -1;
  const draw = () => {
    info.textContent = hist.length ? stepsLabel(hist.length, hist[0].step, hist[hist.length - 1].step) : '';
    drawHistograms(canvas, hist, ctx.runs.color(run), settings.mode, hover);
  };
  const load = async () => {
    const r = await getJSON('histograms/series', { run, tag, points: STEPS });
    hist = r.histograms.map(parse);
    el.dataset.histograms = String(hist.length);
    draw();
    return hist.length;
  };
  canvas.addEventListener('mousemove', (e) => {
    const i = pick(canvas, hist, settings.mode, e);
    if (i !== hover) { hover = i; draw(); }
  });
  canvas.addEventListener('mouseleave', () => { hover = -1; draw(); });
  const ro = new ResizeObserver(() => draw());
  ro.observe(el);
  return { el, load, redraw: draw, destroy: () => ro.disconnect() };
}

