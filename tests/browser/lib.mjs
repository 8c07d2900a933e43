// lib.mjs — what the browser end-to-end tests share: a tiny assertion
// counter, the glassbox server as a child process on a free loopback port,
// and Debian's chromium driven by playwright-core (headless, no sandbox,
// no background networking, a fresh profile), or a clear failure when
// either is missing. Every wait is bounded.

import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

export const SOURCE = process.env.GB_SOURCE_DIR || path.resolve(path.dirname(new URL(import.meta.url).pathname), '../..');
export const BUILD = process.env.GB_BUILD_DIR || path.join(SOURCE, 'build');
export const ARTIFACTS = path.join(BUILD, 'tests', 'artifacts');

let passed = 0, failed = 0;

export function check(name, ok, detail = '') {
  if (ok) { passed++; console.log(`ok - ${name}`); }
  else { failed++; console.log(`not ok - ${name}${detail ? `: ${detail}` : ''}`); }
  return ok;
}

export function summary() {
  console.log(`${passed} passed, ${failed} failed`);
  return failed === 0 && passed > 0;
}

export function tempDir(prefix) {
  return fs.mkdtempSync(path.join(os.tmpdir(), prefix));
}

export function run(program, args, timeoutMs = 30000) {
  return execFileSync(program, args, { timeout: timeoutMs, stdio: ['ignore', 'pipe', 'pipe'] }).toString();
}

// Starts `glassbox serve` on port 0; resolves {url, stop()} once it listens.
export function startServer(db) {
  return startServerWith(['--db', db]);
}

// The same with other arguments than --db (['--logdir', dir]).
export function startServerWith(args) {
  const child = spawn(path.join(BUILD, 'glassbox'), ['serve', ...args, '--port', '0'],
    { stdio: ['ignore', 'pipe', 'pipe'] });
  return new Promise((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => { child.kill('SIGKILL'); reject(new Error(`server did not start: ${out}`)); }, 5000);
    child.stderr.on('data', (d) => { out += d; });
    child.stdout.on('data', (d) => {
      out += d;
      const m = out.match(/serving (http:\/\/127\.0\.0\.1:\d+\/)/);
      if (m) {
        clearTimeout(timer);
        resolve({
          url: m[1],
          pid: child.pid,
          stop: () => new Promise((done) => {
            const kill = setTimeout(() => child.kill('SIGKILL'), 3000);
            child.on('exit', (code, signal) => { clearTimeout(kill); done({ code, signal }); });
            child.kill('SIGTERM');
          }),
        });
      }
    });
    child.on('exit', (code) => { clearTimeout(timer); reject(new Error(`server exited (${code}): ${out}`)); });
  });
}

const CHROMIUM = '/usr/bin/chromium';
const PLAYWRIGHT = path.join(SOURCE, 'static/node_modules/playwright-core/index.mjs');

// Exits at once, failing with a clear message, when chromium or
// playwright-core is missing: before a server or a training run is
// started, so nothing is left behind, and never a silent pass.
export function requireBrowser(label) {
  const missing = [[CHROMIUM, `chromium not found at ${CHROMIUM}`],
    [PLAYWRIGHT, 'playwright-core not found in static/node_modules']].find(([file]) => !fs.existsSync(file));
  if (!missing) return;
  console.log(`not ok - ${label}: ${missing[1]} — run scripts/bootstrap.sh`);
  process.exit(1);
}

// webgl: the pages that draw with WebGL (the Projector) get it from
// SwiftShader, chromium's CPU implementation, as a machine without a GPU
// has it; without the flag headless chromium offers no WebGL at all.
export async function launchBrowser(profileDir, { webgl = false } = {}) {
  const { chromium } = await import(PLAYWRIGHT);
  return chromium.launchPersistentContext(profileDir, {
    executablePath: CHROMIUM,
    headless: true,
    viewport: { width: 1400, height: 900 },
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
      '--disable-background-networking', '--disable-component-update', '--disable-sync',
      ...(webgl ? ['--use-angle=swiftshader', '--enable-unsafe-swiftshader', '--ignore-gpu-blocklist'] : [])],
  });
}

// The browser's first page, collecting every console error, page error
// and failed request into errors (a suite checks it is empty at the end).
export async function watchedPage(browser, viewport = { width: 1400, height: 900 }) {
  const page = browser.pages()[0] || await browser.newPage();
  await page.setViewportSize(viewport);
  const errors = [];
  page.on('console', (m) => { if (m.type() === 'error') errors.push(`console: ${m.text()}`); });
  page.on('pageerror', (e) => errors.push(`page error: ${e.message}`));
  page.on('response', (r) => { if (r.status() >= 400) errors.push(`HTTP ${r.status()} ${r.url()}`); });
  return { page, errors };
}

// A JSON route of the server, for a test to compare the page against.
export async function apiJSON(server, p, params = {}) {
  return (await fetch(new URL(`api/${p}?${new URLSearchParams(params)}`, server.url))).json();
}

// Polls fn (in the page) until it returns a truthy value or timeoutMs passes.
export async function until(page, fn, arg, timeoutMs = 5000) {
  try {
    return await page.waitForFunction(fn, arg, { timeout: timeoutMs, polling: 50 }).then((h) => h.jsonValue());
  } catch {
    return null;
  }
}

// Waits until the dashboard `name` is the page shown and has loaded (not
// the page it replaces, which stays "loaded" until the switch).
export function tabLoaded(page, name, timeoutMs = 5000) {
  return until(page, (n) => location.hash.split('?')[0] === `#${n}` && document.querySelector('.page')?.dataset.tab === n
    && document.querySelector('.page')?.dataset.loaded === 'true', name, timeoutMs);
}

// Runs a suite's main() and then always cleans up, even after an exception:
// closes the browser, stops the server (which must exit cleanly on SIGTERM)
// and removes the work folder, so a failed run leaves no chromium or server
// behind. Exits 0 only when every check passed.
export async function finishSuite(label, main, { browser, server, work, started }) {
  try {
    await main();
  } catch (e) {
    check('no exception', false, e.stack);
  }
  await browser.close();
  const exit = await server.stop();
  check('server: stops cleanly on SIGTERM', exit.code === 0, JSON.stringify(exit));
  fs.rmSync(work, { recursive: true, force: true });
  console.log(`${label} took ${((Date.now() - started) / 1000).toFixed(1)} s`);
  process.exit(summary() ? 0 : 1);
}
