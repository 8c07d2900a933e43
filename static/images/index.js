// The Images dashboard: per tag and run, a step slider and every sample of
// the chosen step; brightness and contrast controls and an actual-size
// toggle apply to all images. Live: a slider at the newest step follows new
// steps, one moved back stays where it is.

import { apiUrl, getJSON } from '../core/api.js';
import { h } from '../core/dom.js';
import { stepSlider } from '../core/step_slider.js';
import { runLabel, tagPage } from '../core/tagpage.js';

export const name = 'images';

const settings = { brightness: 1, contrast: 1, actual: false };

export function createPage(ctx) {
  const slider = (key, label) => {
    const out = h('span.value', null, settings[key].toFixed(2));
    const input = h('input', { type: 'range', min: 0, max: 2, step: 0.05, value: settings[key], id: key, 'aria-label': label,
      oninput: () => { settings[key] = +input.value; out.textContent = settings[key].toFixed(2); page.redraw(); } });
    return [h('div.section-title', null, label), h('div.slider-row', null, input, out)];
  };
  const controls = h('div', null, ...slider('brightness', 'Brightness'), ...slider('contrast', 'Contrast'),
    h('div.section-title', null, 'Size'),
    h('label.check', null, h('input', { type: 'checkbox', id: 'actual-size', checked: settings.actual,
      onchange: (e) => { settings.actual = e.target.checked; page.redraw(); } }), 'Actual size'),
    h('button.small', { type: 'button', style: { marginTop: '8px' },
      onclick: () => { settings.brightness = 1; settings.contrast = 1; for (const id of ['brightness', 'contrast']) document.getElementById(id).value = 1; page.redraw(); } }, 'Reset brightness/contrast'));

  const page = tagPage(ctx, { plugin: 'images', controls, noun: 'image', block: (run, tag) => {
    const slider = stepSlider(() => show());
    const row = h('div.images-row');
    const el = h('div.run-block', { 'data-run': run }, runLabel(ctx, run), slider.el, row);
    const show = () => {
      const s = slider.current();
      if (!s) { row.replaceChildren(); return; }   // the block says so in words
      el.dataset.step = String(s.step);
      el.dataset.samples = String(s.samples.length);
      row.replaceChildren(...s.samples.map((smp) => h('div.image-cell', null,
        h('img', { src: apiUrl('images/png', { run, tag, step: s.step, index: smp.index }), alt: `${tag} step ${s.step} sample ${smp.index}`,
          width: smp.width, height: smp.height, className: settings.actual ? '' : 'scaled', draggable: false }),
        `#${smp.index} · ${smp.width}×${smp.height}`)));
      redraw();
    };
    const redraw = () => {
      for (const img of row.querySelectorAll('img')) {
        img.style.filter = `brightness(${settings.brightness}) contrast(${settings.contrast})`;
        img.className = settings.actual ? '' : 'scaled';
      }
    };
    const load = async () => {
      const r = await getJSON('images/list', { run, tag, points: 200 });
      slider.set(r.steps);
      el.dataset.steps = String(r.steps.length);
      show();
      return r.steps.length;
    };
    return { el, load, redraw };
  } });
  return page;
}
