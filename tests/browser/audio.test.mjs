// audio.test.mjs — the Audio page end to end: audio_synth trains its tiny
// generator three times (runs side by side; one logged at 3x volume, so
// it clips) and
// logs the generated chord every 5 epochs; `glassbox serve` serves the
// store and Debian's chromium opens the Audio tab with the real mouse and
// keyboard. Checks: a card per tag with a block per run, the step slider
// at the newest step and moved back with the keyboard, each clip's facts
// from the API (rate, length), the waveform drawn from the WAV (its
// envelope against the samples Python's wave module reads from the same
// file), the spectrogram computed in the worker with the chord's energy in
// its bins, a clipped clip saying how many samples were clipped, and the
// player playing: clicked with the mouse, audio.currentTime advances.
// Screenshots: <build>/tests/artifacts/audio_*.png.

import path from 'node:path';
import fs from 'node:fs';
import { execFileSync } from 'node:child_process';
import { ARTIFACTS, BUILD, check, finishSuite, launchBrowser, requireBrowser, run, startServer, tabLoaded, tempDir, until, watchedPage } from './lib.mjs';

requireBrowser('audio_browser');
const work = tempDir('gb-audio-');
const db = path.join(work, 'audio.db');
fs.mkdirSync(ARTIFACTS, { recursive: true });
const started = Date.now();
const synth = path.join(BUILD, 'examples/audio_synth');
run(synth, ['--db', db, '--run', 'slow', '--lr', '2e-4', '--epochs', '60', '--max-loss', '1'], 120000);
run(synth, ['--db', db, '--run', 'fast', '--lr', '1e-3', '--epochs', '60', '--samples', '16000', '--max-loss', '1'], 120000);
run(synth, ['--db', db, '--run', 'loud', '--epochs', '10', '--volume', '3', '--max-loss', '1'], 120000);

const server = await startServer(db);
const browser = await launchBrowser(path.join(work, 'profile'));
const { page, errors } = await watchedPage(browser);
const shot = (name, el) => (el ?? page).screenshot({ path: path.join(ARTIFACTS, `audio_${name}.png`) });

async function main() {
  const list = await (await fetch(new URL('api/audio/list?run=fast&tag=synth/output', server.url))).json();
  check('api: a clip every 5 epochs, 16000 samples at 8 kHz', list.steps.length === 12 &&
    list.steps.every((s) => s.clips.length === 1 && s.clips[0].frames === 16000 && s.clips[0].sample_rate === 8000), JSON.stringify(list.steps[0]));
  const lastStep = list.steps.at(-1).step;

  await page.goto(server.url);
  check('shell: ready', await until(page, () => window.__glassbox?.ready, null, 10000));
  await page.click('a[data-tab="audio"]');
  check('audio: page loads', await tabLoaded(page, 'audio', 15000));
  const card = '.card[data-tag="synth/output"]';
  await until(page, (c) => document.querySelectorAll(`${c} .audio-clip[data-spectrogram]`).length === 3, card, 30000);
  const runs = await page.$$eval(`${card} .run-block`, (bs) => bs.map((b) => [b.dataset.run, b.dataset.step]));
  check('audio: the three runs side by side at the newest step', JSON.stringify(runs.map((r) => r[0]).sort()) === '["fast","loud","slow"]' &&
    runs.filter((r) => r[0] !== 'loud').every((r) => r[1] === String(lastStep)), JSON.stringify(runs));
  const boxes = await page.$$eval(`${card} .run-block`, (bs) => bs.map((b) => b.getBoundingClientRect().top));
  check('audio: the runs share a row', Math.abs(boxes[0] - boxes[1]) < 2, JSON.stringify(boxes));
  const facts = await page.$eval(`${card} .run-block[data-run="fast"] .audio-clip .muted`, (e) => e.textContent);
  check('clip: its facts', facts === '#0 · 2.00 s · 8000 Hz · mono', facts);

  // ---- the waveform against the WAV Python reads -------------------------------------------------
  const wavFile = path.join(work, 'last.wav');
  const res = await fetch(new URL(`api/audio/wav?run=fast&tag=synth/output&step=${lastStep}`, server.url));
  fs.writeFileSync(wavFile, Buffer.from(await res.arrayBuffer()));
  const peak = +execFileSync('/usr/bin/python3', ['-c',
    'import wave,sys,array; w=wave.open(sys.argv[1]); a=array.array("h", w.readframes(w.getnframes())); print(max(abs(v) for v in a)/32768)', wavFile]).toString();
  const drawn = await page.$eval(`${card} .run-block[data-run="fast"] canvas.audio-wave`, (c) => {
    const g = c.getContext('2d'), { data } = g.getImageData(0, 0, c.width, c.height);
    let top = c.height, bottom = 0;   // the blue envelope's extent
    for (let y = 0; y < c.height; y++) for (let x = 0; x < c.width; x++) {
      const o = 4 * (y * c.width + x);
      if (data[o + 2] > 200 && data[o] < 100) { top = Math.min(top, y); bottom = Math.max(bottom, y); }
    }
    return { top, bottom, h: c.height };
  });
  const want = (1 - peak) / 2 * drawn.h;
  check('waveform: its envelope reaches the peak Python reads from the WAV', Math.abs(drawn.top - want) <= 2 &&
    Math.abs(drawn.bottom - (drawn.h - want)) <= 3, `${JSON.stringify(drawn)} peak ${peak}`);

  // ---- the spectrogram: computed in the worker, brightest where the chord is ------------------------
  const spec = await page.$eval(`${card} .run-block[data-run="fast"] .audio-clip`, (c) => c.dataset.spectrogram);
  check('spectrogram: STFT frames x bins from the worker (512-sample windows every 128)', spec === '122x257', spec);
  const rows = await page.$eval(`${card} .run-block[data-run="fast"] canvas.audio-spec`, (c) => {
    const g = c.getContext('2d'), { data } = g.getImageData(0, 0, c.width, c.height);
    const bright = [];   // mean brightness of each pixel row, top (4 kHz) to bottom (0 Hz)
    for (let y = 0; y < c.height; y++) {
      let s = 0;
      for (let x = 0; x < c.width; x++) s += data[4 * (y * c.width + x)] + data[4 * (y * c.width + x) + 1];
      bright.push(s / c.width);
    }
    return bright;
  });
  const hzOf = (row) => (1 - (row + 0.5) / rows.length) * 4000;
  const brightest = rows.indexOf(Math.max(...rows));
  check('spectrogram: the brightest band is the chord (440-660 Hz)', hzOf(brightest) > 380 && hzOf(brightest) < 720, `${hzOf(brightest).toFixed(0)} Hz`);
  await shot('page');
  await shot('clip', page.locator(`${card} .run-block[data-run="fast"]`));

  // ---- the step slider: back to the first step with the keyboard ------------------------------------------
  await page.focus(`${card} .run-block[data-run="fast"] input[type=range]`);
  await page.keyboard.press('Home');
  await until(page, (c) => document.querySelector(`${c} .run-block[data-run="fast"]`).dataset.step === '5' &&
    document.querySelector(`${c} .run-block[data-run="fast"] .audio-clip[data-spectrogram]`), card, 10000);
  check('slider: Home shows the first logged step', await page.$eval(`${card} .run-block[data-run="fast"]`, (b) => b.dataset.step) === '5');
  await shot('first_step', page.locator(`${card} .run-block[data-run="fast"]`));

  // ---- the player: a click plays it, currentTime advances ---------------------------------------------------
  await page.keyboard.press('End');
  await until(page, (c) => document.querySelector(`${c} .run-block[data-run="fast"]`).dataset.step !== '5', card, 10000);
  const player = page.locator(`${card} .run-block[data-run="fast"] audio`);
  await until(page, (c) => document.querySelector(`${c} .run-block[data-run="fast"] audio`).readyState >= 3, card, 10000);
  const pb = await player.boundingBox();
  await page.mouse.click(pb.x + 20, pb.y + pb.height / 2);   // the play button, at the control's left
  const t = await until(page, (c) => { const a = document.querySelector(`${c} .run-block[data-run="fast"] audio`); return a.currentTime > 0.4 && a.currentTime; }, card, 10000);
  check('player: clicking play plays the clip (currentTime advances)', t !== null, String(t));
  await shot('playing', page.locator(`${card} .run-block[data-run="fast"]`));
  const t2 = await until(page, (args) => { const a = document.querySelector(`${args[0]} .run-block[data-run="fast"] audio`); return a.currentTime > args[1] && a.currentTime; }, [card, t], 5000);
  check('player: currentTime keeps advancing', t2 !== null && t2 > t, `${t} -> ${t2}`);

  // ---- clipping is reported ----------------------------------------------------------------------------------
  const loud = await (await fetch(new URL('api/audio/list?run=loud&tag=synth/output', server.url))).json();
  const clipped = loud.steps.at(-1).clips[0].clipped;
  const said = await page.$eval(`${card} .run-block[data-run="loud"] .audio-clipped`, (e) => e.textContent).catch(() => null);
  check('clipping: the loud run\'s clip says how many samples were clipped', clipped > 0 &&
    said === `${clipped.toLocaleString('en-US')} samples clipped to [-1, 1]`, `${said} (api: ${clipped})`);
  await shot('clipped', page.locator(`${card} .run-block[data-run="loud"]`));
  check('no console errors, page errors or failed requests', errors.length === 0, errors.join('\n'));
}

await finishSuite('audio_browser', main, { browser, server, work, started });
