// blockstate.js — where a run block's data stands, said in words on the
// block: "Loading…" until its first fetch returns, "No <noun>s" once a
// fetch returned nothing, the error when the first one failed. The block's
// own content stays hidden until it has something to draw (blockstate.css,
// by data-state), so a blank or half-drawn chart never passes for an empty
// one, and a card below the fold says it has not loaded yet.

import { h } from './dom.js';
import './blockstate.css';

// height: the pixels the block's content will take, kept while loading so
// that cards do not move (and come near the screen) as others fill in.
export function blockState(el, noun, height = 0) {
  const line = h('div.block-status');
  el.append(line);
  const set = (state, text) => {
    el.dataset.state = state;
    line.textContent = text;
    line.style.minHeight = state === 'loading' && height ? `${height}px` : '';
  };
  set('loading', 'Loading…');
  return {
    // Follows a fetch that resolves to the number of items it brought.
    async track(fetching) {
      try {
        const n = await fetching;
        set(n > 0 ? 'ready' : 'empty', n > 0 ? '' : `No ${noun}s`);
      } catch (e) {
        // What is drawn stays: a failed update leaves it one change behind.
        if (el.dataset.state !== 'ready') set('error', `Could not load: ${e.message}`);
      }
    },
  };
}
