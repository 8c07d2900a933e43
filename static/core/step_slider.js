// A step slider over one run's steps of a tag (the Images and Audio
// pages): the label "step S (i/n)" and a range input. While the slider
// sits at the newest step, a live update moves it to the new newest;
// elsewhere it keeps the step it shows when the list grows.

import { h } from './dom.js';

// onChange() runs when a person moves the slider. Returns { el, set,
// current }: set(steps) takes a new list of {step, ...}; current() is the
// step shown (undefined for an empty list), the label kept in step.
export function stepSlider(onChange) {
  const label = h('span');
  let steps = [], atEnd = true;
  const range = h('input', { type: 'range', min: 0, max: 0, step: 1, value: 0, 'aria-label': 'Step',
    oninput: () => { atEnd = +range.value === steps.length - 1; onChange(); } });
  const current = () => {
    const s = steps[+range.value];
    if (s) label.textContent = `step ${s.step} (${+range.value + 1}/${steps.length})`;
    return s;
  };
  const set = (next) => {
    const prev = steps[+range.value]?.step;
    steps = next;
    range.max = String(Math.max(0, steps.length - 1));
    const keep = steps.findIndex((s) => s.step === prev);
    range.value = String(atEnd || keep < 0 ? steps.length - 1 : keep);
  };
  return { el: h('div.step-row', null, label, range), set, current };
}
