// char_lm.test.mjs — what the language model shows while it trains:
// examples/char_lm (a short run: 3 epochs of a few steps) serves its own
// dashboard, and a person opens the Text page — one sample per epoch,
// newest first, each the 300 characters the program printed for that
// epoch — then the Images page, with one attention image per head and
// block. Screenshots: <build>/tests/artifacts/char_lm-*.png.

import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { ARTIFACTS, BUILD, check, launchBrowser, requireBrowser, summary, tabLoaded, tempDir, until } from './lib.mjs';

requireBrowser('char_lm_browser');
const work = tempDir('gb-char-lm-');
fs.mkdirSync(ARTIFACTS, { recursive: true });
const db = path.join(work, 'lm.db');
const EPOCHS = 3;

// Trains while serving, then keeps serving; resolves once training is done.
function train() {
  const child = spawn(path.join(BUILD, 'examples/char_lm'),
    ['--epochs', String(EPOCHS), '--steps', '3', '--batch', '8', '--layers', '2', '--val-windows', '8',
      '--verbose', '2', '--db', db, '--run', 'lm', '--serve', '0', '--keep-serving'],
    { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => { child.kill('SIGKILL'); reject(new Error(`training did not finish: ${out}`)); }, 240000);
    child.stderr.on('data', (d) => { out += d; });
    child.stdout.on('data', (d) => {
      out += d;
      const m = out.match(/^dashboard: (http:\/\/127\.0\.0\.1:\d+\/)/m);
      if (m && out.includes('still serving')) { clearTimeout(timer); resolve({ url: m[1], child, output: out }); }
    });
    child.on('exit', (code) => { clearTimeout(timer); reject(new Error(`char_lm exited (${code}): ${out}`)); });
  });
}

// The samples the program printed, by epoch (1-based): "epoch N sample: <text>"
// up to the next "epoch"/progress line. The text may hold newlines.
function printedSamples(out) {
  const samples = {};
  const re = /^epoch (\d+) sample: ([\s\S]*?)\n(?=\d+\/\d+ - |epoch \d+ sample: |final val_loss)/gm;
  for (let m; (m = re.exec(out));) samples[Number(m[1])] = m[2];
  return samples;
}

async function main() {
  const t = await train();
  const printed = printedSamples(t.output);
  check('char_lm: a sample printed per epoch', Object.keys(printed).length === EPOCHS, Object.keys(printed).join(','));
  const browser = await launchBrowser(path.join(work, 'profile'));
  const page = browser.pages()[0] || await browser.newPage();
  await page.setViewportSize({ width: 1280, height: 1400 });
  const errors = [];
  page.on('console', (m) => { if (m.type() === 'error') errors.push(m.text()); });
  page.on('pageerror', (e) => errors.push(e.message));
  try {
    await page.goto(t.url);
    check('char_lm: dashboard loads', await until(page, () => window.__glassbox?.ready, null, 10000));
    await page.click('a[data-tab="text"]');
    await tabLoaded(page, 'text', 15000);
    const sel = '.card[data-tag="samples/generated"] .run-block[data-run="lm"]';
    check('char_lm: one text entry per epoch', await until(page, ([s, n]) => document.querySelector(s)?.dataset.entries === String(n),
      [sel, EPOCHS], 15000));
    const shown = await page.$$eval(`${sel} .text-entry`, (es) => es.map((e) => ({
      step: Number(e.dataset.step), text: e.querySelector('.text-body pre')?.textContent ?? null })));
    check('char_lm: newest epoch first', shown.map((s) => s.step).join(',') === '2,1,0', shown.map((s) => s.step).join(','));
    // Each entry is a code block holding exactly what the program printed for its epoch.
    for (const s of shown) {
      const want = printed[s.step + 1];
      check(`char_lm: epoch ${s.step + 1}'s sample as printed`, s.text !== null && s.text.replace(/\n$/, '') === want,
        JSON.stringify({ shown: s.text?.slice(0, 60), printed: want?.slice(0, 60) }));
    }
    check('char_lm: samples are 300 characters after the prompt', Object.values(printed).every((p) => p.startsWith('The ') && p.length === 304),
      Object.values(printed).map((p) => p.length).join(','));
    await page.screenshot({ path: path.join(ARTIFACTS, 'char_lm-text.png'), fullPage: true });
    await page.click('a[data-tab="images"]');
    await tabLoaded(page, 'images', 15000);
    const heads = await until(page, () => {
      const c = document.querySelector('.card[data-tag="attention/block0"]');
      const imgs = c ? [...c.querySelectorAll('img')] : [];
      return imgs.length && imgs.every((i) => i.complete && i.naturalWidth === 128) ? imgs.length : 0;
    }, null, 15000);
    check('char_lm: attention images of block 0, 128 x 128', heads >= 1, `${heads}`);
    check('char_lm: a card per block', await page.$$eval('.card[data-tag^="attention/"]', (cs) => cs.length) === 2);
    await page.screenshot({ path: path.join(ARTIFACTS, 'char_lm-attention.png'), fullPage: true });
    check('char_lm: no console errors', errors.length === 0, errors.join(' | '));
  } finally {
    await browser.close();
    const exited = new Promise((r) => t.child.on('exit', r));
    t.child.kill('SIGINT');
    await exited;
  }
  fs.rmSync(work, { recursive: true, force: true });
}

try {
  await main();
} catch (e) {
  check('char_lm: ran to the end', false, e.stack);
}
process.exit(summary() ? 0 : 1);
