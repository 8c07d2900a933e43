// The Audio dashboard (tf.summary.audio): per tag a card, inside it one
// block per selected run, side by side, each with a step slider and, for
// every clip of the step, a player, the waveform (min/max per pixel
// column, with the playing position) and the spectrogram (computed in a
// worker: spectrogram.worker.js). A clip whose values left [-1, 1] says
// how many samples were clipped. Live: a slider at the newest step
// follows new steps.

import { apiUrl, getJSON } from '../core/api.js';
import { h } from '../core/dom.js';
import { stepSlider } from '../core/step_slider.js';
import { runLabel, tagPage } from '../core/tagpage.js';
import { readWav } from './wav.js';
import './audio.css';

export const name = 'audio';

const WORKER_URL = '/static/audio_spectrogram.worker.js';
const WAVE_HEIGHT = 70, SPEC_HEIGHT = 110;

let worker = null, jobs = 0;
const pending = new Map();
function spectrogramOf(samples) {
  if (!worker) {
    worker = new Worker(WORKER_URL);
    worker.onmessage = (ev) => { pending.get(ev.data.id)?.(ev.data); pending.delete(ev.data.id); };
  }
  const id = ++jobs;
  return new Promise((resolve) => {
    pending.set(id, resolve);
    const copy = samples.slice();
    worker.postMessage({ id, samples: copy }, [copy.buffer]);
  });
}

// Min/max of the samples per pixel column, with a cursor at `at` (0..1).
function drawWave(canvas, samples, at) {
  const w = canvas.width, hgt = canvas.height, g = canvas.getContext('2d');
  g.clearRect(0, 0, w, hgt);
  g.fillStyle = '#f5f7fa';
  g.fillRect(0, 0, w, hgt);
  g.strokeStyle = '#cfd8dc';
  g.beginPath(); g.moveTo(0, hgt / 2); g.lineTo(w, hgt / 2); g.stroke();
  g.fillStyle = '#1e88e5';
  const per = samples.length / w;
  for (let x = 0; x < w; x++) {
    let lo = 1, hi = -1;
    for (let i = Math.floor(x * per), end = Math.max(i + 1, Math.floor((x + 1) * per)); i < end && i < samples.length; i++) {
      if (samples[i] < lo) lo = samples[i];
      if (samples[i] > hi) hi = samples[i];
    }
    if (hi < lo) continue;
    const y0 = (1 - hi) / 2 * hgt, y1 = (1 - lo) / 2 * hgt;
    g.fillRect(x, y0, 1, Math.max(1, y1 - y0));
  }
  if (at > 0) {
    g.fillStyle = '#e53935';
    g.fillRect(Math.round(at * w), 0, 2, hgt);
  }
}

function clipView(run, tag, step, clip) {
  const src = apiUrl('audio/wav', { run, tag, step, index: clip.index });
  const audio = h('audio', { controls: true, preload: 'auto', src, 'data-index': clip.index });
  const wave = h('canvas.audio-wave', { width: 360, height: WAVE_HEIGHT });
  const spec = h('canvas.audio-spec', { width: 360, height: SPEC_HEIGHT });
  const secs = clip.frames / clip.sample_rate;
  const facts = `#${clip.index} · ${secs.toFixed(2)} s · ${clip.sample_rate} Hz · ${clip.channels === 1 ? 'mono' : `${clip.channels} channels`}`;
  const clipped = clip.clipped
    ? h('div.audio-clipped', null, `${clip.clipped.toLocaleString()} samples clipped to [-1, 1]`) : null;
  const el = h('div.audio-clip', { 'data-index': clip.index, 'data-clipped': clip.clipped }, h('div.muted', null, facts), clipped,
    audio, h('div.audio-label', null, 'Waveform'), wave, h('div.audio-label', null, `Spectrogram (0 – ${(clip.sample_rate / 2000).toFixed(1)} kHz)`), spec);
  let samples = null;
  audio.addEventListener('timeupdate', () => { if (samples) drawWave(wave, samples, audio.currentTime / secs); });
  (async () => {
    const res = await fetch(src, { cache: 'force-cache' });
    if (!res.ok) throw new Error(`the clip could not be fetched (${res.status})`);
    const wav = readWav(await res.arrayBuffer());
    samples = wav.samples;
    drawWave(wave, samples, 0);
    el.dataset.waveform = 'drawn';
    const s = await spectrogramOf(samples);
    const img = new ImageData(s.pixels, s.width, s.height);
    const bmp = await createImageBitmap(img);
    spec.getContext('2d').drawImage(bmp, 0, 0, spec.width, spec.height);
    el.dataset.spectrogram = `${s.frames}x${s.bins}`;
  })().catch((e) => { el.append(h('div.audio-error', null, String(e.message ?? e))); });
  return el;
}

export function createPage(ctx) {
  return tagPage(ctx, { plugin: 'audio', noun: 'clip', blockHeight: () => 300, block: (run, tag) => {
    const slider = stepSlider(() => show());
    const clips = h('div.audio-clips');
    const el = h('div.run-block', { 'data-run': run }, runLabel(ctx, run), slider.el, clips);
    let shownKey = '';
    const show = () => {
      const s = slider.current();
      if (!s) { clips.replaceChildren(); return; }
      const key = `${s.step}/${s.clips.length}`;
      if (key === shownKey) return;   // a live update of the same step keeps the players
      shownKey = key;
      el.dataset.step = String(s.step);
      clips.replaceChildren(...s.clips.map((c) => clipView(run, tag, s.step, c)));
    };
    const load = async () => {
      const r = await getJSON('audio/list', { run, tag, points: 200 });
      slider.set(r.steps);
      el.dataset.steps = String(r.steps.length);
      show();
      return r.steps.length;
    };
    return { el, load, destroy: () => { for (const a of el.querySelectorAll('audio')) a.pause(); } };
  } });
}
