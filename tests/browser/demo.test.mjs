// demo.test.mjs — what `make demo` shows, checked in a browser while the
// model trains: examples/fashion_mnist_fit (the CNN through fit, with the
// summary callback) serves its own dashboard (--serve 0 picks a free
// loopback port) and the scalars, histograms and graphs pages fill in live. Screenshots: <build>/tests/artifacts/demo-*.png.

import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { ARTIFACTS, BUILD, check, launchBrowser, requireBrowser, summary, tabLoaded, tempDir, until } from './lib.mjs';

requireBrowser('demo_browser');
const work = tempDir('gb-demo-');
fs.mkdirSync(ARTIFACTS, { recursive: true });
const db = path.join(work, 'demo.db');

// Starts training with the dashboard; resolves {url, child} once it prints the address.
function startTraining() {
  const child = spawn(path.join(BUILD, 'examples/fashion_mnist_fit'),
    // Long enough that it is still training when the checks run; the test
    // stops it at the end.
    ['--model', 'cnn_bn', '--epochs', '30', '--limit', '4000', '--db', db, '--run', 'demo-cnn-bn', '--serve', '0'],
    { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => { child.kill('SIGKILL'); reject(new Error(`no dashboard address: ${out}`)); }, 10000);
    child.stderr.on('data', (d) => { out += d; });
    child.stdout.on('data', (d) => {
      out += d;
      const m = out.match(/^dashboard: (http:\/\/127\.0\.0\.1:\d+\/)/m);
      if (m) { clearTimeout(timer); resolve({ url: m[1], child, output: () => out }); }
    });
    child.on('exit', (code) => { clearTimeout(timer); reject(new Error(`training exited (${code}): ${out}`)); });
  });
}

async function main() {
  const t = await startTraining();
  check('demo: the dashboard address is printed first', t.output().trimStart().startsWith('dashboard: '));
  const browser = await launchBrowser(path.join(work, 'profile'));
  const page = browser.pages()[0] || await browser.newPage();
  const errors = [];
  page.on('console', (m) => { if (m.type() === 'error') errors.push(m.text()); });
  page.on('pageerror', (e) => errors.push(e.message));
  try {
    await page.goto(t.url);
    check('demo: dashboard loads while training', await until(page, () => window.__glassbox?.ready, null, 10000));
    // The loss card appears and keeps growing while training runs.
    const points = () => page.$eval('.card[data-tag="batch/loss"]', (c) => Object.values(JSON.parse(c.dataset.points || '{}'))[0] || 0).catch(() => 0);
    check('demo: batch/loss card appears', await until(page, () => !!document.querySelector('.card[data-tag="batch/loss"]'), null, 60000));
    const first = await points();
    let later = first;
    // Sanitizer builds run a step in about half a second and an epoch's
    // validation pauses the curve: allow 30 s.
    for (let i = 0; i < 120 && later <= first; i++) {
      await new Promise((r) => setTimeout(r, 250));
      later = await points();
    }
    check('demo: loss curve grows live', later > first, `${first} -> ${later}`);
    // Wait for the first epoch's accuracies and histograms.
    check('demo: epoch/val_accuracy after an epoch', await until(page, () => !!document.querySelector('.card[data-tag="epoch/val_accuracy"]'), null, 120000));
    await page.screenshot({ path: path.join(ARTIFACTS, 'demo-scalars.png') });
    await page.click('a[data-tab="histograms"]');
    await tabLoaded(page, 'histograms', 15000);
    const hist = await until(page, () => document.querySelectorAll('[data-tag^="weights/"]').length, null, 15000);
    check('demo: weight histograms of every layer', hist >= 6, `${hist}`);
    await page.screenshot({ path: path.join(ARTIFACTS, 'demo-histograms.png') });
    // fit's train_function, traced, with its scopes: the model, the loss, the optimizer.
    await page.click('a[data-tab="graphs"]');
    await tabLoaded(page, 'graphs', 15000);
    const scopes = await until(page, () => document.querySelector('.graphs-page')?.dataset.state === 'ready' &&
      [...document.querySelectorAll('.scope.closed')].map((g) => g.dataset.path).sort().join(','), null, 20000);
    check('demo: the traced train step on the Graphs page', ['Adam', 'cnn_bn', 'loss'].every((x) => `${scopes}`.split(',').includes(x)), `${scopes}`);
    await page.screenshot({ path: path.join(ARTIFACTS, 'demo-graphs.png') });
    check('demo: no console errors', errors.length === 0, errors.join(' | '));
  } finally {
    await browser.close();
    if (t.child.exitCode === null && t.child.signalCode === null) {
      const exited = new Promise((r) => t.child.on('exit', r));
      t.child.kill('SIGINT'); // Ctrl-C, as a person stops `make demo`
      await exited;
    }
  }
  fs.rmSync(work, { recursive: true, force: true });
}

try {
  await main();
} catch (e) {
  check('demo: ran to the end', false, e.stack);
}
process.exit(summary() ? 0 : 1);
