// auth.test.mjs — a dashboard that leaves loopback, as a person reaches
// it: `glassbox serve --host 0.0.0.0` prints an address with its token;
// Debian's chromium (playwright-core) opens that address once, lands on
// the dashboard without the token in the address bar (the redirect set a
// cookie: HttpOnly, SameSite=Strict), shows the store's runs, and opens
// other pages by clicking tabs and by typing addresses without the token;
// a browser without the cookie gets 401 everywhere. Screenshots:
// <build>/tests/artifacts/auth*.png.

import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { ARTIFACTS, BUILD, check, launchBrowser, requireBrowser, run, summary, tabLoaded, tempDir, until } from './lib.mjs';

requireBrowser('webui_auth_browser');
const work = tempDir('gb-auth-');
const db = path.join(work, 'api.db');
fs.mkdirSync(ARTIFACTS, { recursive: true });
run(path.join(BUILD, 'tests/webui_fixtures'), ['api', db]);

// `glassbox serve` beyond loopback: resolves the address it printed.
function serve() {
  const child = spawn(path.join(BUILD, 'glassbox'), ['serve', '--db', db, '--host', '0.0.0.0', '--port', '0'],
    { stdio: ['ignore', 'pipe', 'pipe'] });
  return new Promise((resolve, reject) => {
    let out = '', err = '';
    const timer = setTimeout(() => { child.kill('SIGKILL'); reject(new Error(`no address printed: ${out}`)); }, 10000);
    child.stderr.on('data', (d) => { err += d; });
    child.stdout.on('data', (d) => {
      out += d;
      const m = out.match(/serving http:\/\/0\.0\.0\.0:(\d+)\/\?token=([0-9a-f]+) /);
      if (m) { clearTimeout(timer); resolve({ child, port: +m[1], token: m[2], stderr: () => err }); }
    });
    child.on('exit', (code) => { clearTimeout(timer); reject(new Error(`server exited (${code}): ${out}${err}`)); });
  });
}

const server = await serve();
const base = `http://127.0.0.1:${server.port}/`;
const browser = await launchBrowser(path.join(work, 'profile'));
const stranger = await launchBrowser(path.join(work, 'profile2'));

async function main() {
  check('serve: the token printed is 48 hex digits', server.token.length === 48, server.token);
  check('serve: says why there is a token', /reachable from other machines/.test(server.stderr()), server.stderr());

  const page = browser.pages()[0] || await browser.newPage();
  const errors = [];
  page.on('pageerror', (e) => errors.push(e.message));
  page.on('response', (r) => { if (r.status() >= 400) errors.push(`HTTP ${r.status()} ${r.url()}`); });
  await page.goto(`${base}?token=${server.token}`);
  check('login: the address loses its token', page.url() === base, page.url());
  const cookies = await browser.cookies(base);
  const c = cookies.find((k) => k.name === 'gb_token');
  check('login: the cookie holds the token', c?.value === server.token, JSON.stringify(cookies));
  check('login: the cookie is HttpOnly and SameSite=Strict', c?.httpOnly === true && c?.sameSite === 'Strict', JSON.stringify(c));
  check('login: scripts cannot read it', (await page.evaluate(() => document.cookie)) === '');
  check('dashboard: ready', await until(page, () => window.__glassbox?.ready && document.querySelector('.page')?.dataset.loaded === 'true', null, 15000));
  const runs = await page.$$eval('[data-run]', (els) => [...new Set(els.map((e) => e.dataset.run))]);
  check('dashboard: the store\'s runs are listed', runs.includes('alpha') && runs.includes('beta'), runs.join());
  await page.screenshot({ path: path.join(ARTIFACTS, 'auth_logged_in.png') });

  // Another page by a real click on its tab, then an address typed without the token.
  const tab = page.locator('a.tab[data-tab="histograms"]');
  if (await tab.count()) {
    await tab.click();
    check('dashboard: a tab opens by click', await tabLoaded(page, 'histograms', 15000));
  }
  await page.goto(`${base}#scalars`);
  check('dashboard: an address without the token opens', await tabLoaded(page, 'scalars', 15000));
  check('dashboard: no request refused', errors.length === 0, errors.join('; '));

  // A browser that never had the token.
  const other = stranger.pages()[0] || await stranger.newPage();
  const resp = await other.goto(base);
  check('stranger: the page is 401', resp.status() === 401, String(resp.status()));
  check('stranger: says a token is needed', /needs its token/.test(await other.textContent('body')));
  const api = await other.goto(`${base}api/runs`);
  check('stranger: the API is 401', api.status() === 401, String(api.status()));
  await other.goto(base);
  await other.screenshot({ path: path.join(ARTIFACTS, 'auth_stranger.png') });
}

const started = Date.now();
try {
  await main();
} catch (e) {
  check('no exception', false, e.stack);
}
await browser.close();
await stranger.close();
server.child.kill('SIGTERM');
await new Promise((done) => server.child.on('exit', done));
fs.rmSync(work, { recursive: true, force: true });
console.log(`webui_auth_browser took ${((Date.now() - started) / 1000).toFixed(1)} s`);
process.exit(summary() ? 0 : 1);
