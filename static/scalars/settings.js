// settings.js — the Scalars page's settings and the sidebar controls that
// change them: smoothing, horizontal axis (step / relative / wall time),
// log scale, ignore outliers; and the tag filter. Kept at module level so
// they survive tab switches.

import { h } from '../core/dom.js';

export const settings = { smoothing: 0.6, x: 'step', log: false, outliers: false, tagFilter: '' };

// onChange(key) runs after a setting changed.
export function scalarControls(onChange) {
  const set = (key, value) => { settings[key] = value; onChange(key); };
  return h('div', null,
    h('div.section-title', null, 'Smoothing'), smoothingSlider(set),
    h('div.section-title', null, 'Horizontal axis'),
    h('div.radios', null, radio(set, 'x', 'step', 'Step'), radio(set, 'x', 'relative', 'Relative'), radio(set, 'x', 'wall', 'Wall')),
    h('div.section-title', null, 'Vertical axis'),
    check(set, 'log', 'Log scale', 'log-scale'), check(set, 'outliers', 'Ignore outliers', 'ignore-outliers'));
}

function smoothingSlider(set) {
  const shown = h('span.value', null, settings.smoothing.toFixed(2));
  const slider = h('input', { type: 'range', min: 0, max: 0.99, step: 0.01, value: settings.smoothing,
    id: 'smoothing', 'aria-label': 'Smoothing',
    oninput: () => { shown.textContent = (+slider.value).toFixed(2); set('smoothing', +slider.value); } });
  return h('div.slider-row', null, slider, shown);
}

function radio(set, group, value, label) {
  return h('label.radio', null,
    h('input', { type: 'radio', name: group, value, checked: settings[group] === value,
      onchange: () => set(group, value) }), label);
}

function check(set, key, label, id) {
  return h('label.check', null,
    h('input', { type: 'checkbox', id, checked: settings[key],
      onchange: (e) => set(key, e.target.checked) }), label);
}
