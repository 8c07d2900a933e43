// traces.test.mjs — the Traces page on the store examples/retracing writes
// (every cause of a retrace, the "function in a loop" mistake and the
// varying dim that raise the excessive-retracing warning): a card per
// function with its counters, the warning shown where it was raised, each
// reason verbatim as the server (and the terminal) words it, the concrete
// signatures, a link to each trace's graph; and live: traces written while
// the page is open appear within two seconds.
// Screenshots: traces.png, traces-live.png.

import fs from 'node:fs';
import path from 'node:path';
import { apiJSON, ARTIFACTS, BUILD, check, finishSuite, launchBrowser, requireBrowser, run, startServer, tabLoaded, tempDir, until, watchedPage } from './lib.mjs';

const RUN = 'retracing';
requireBrowser('webui_traces_browser');
const work = tempDir('gb-traces-');
const db = path.join(work, 'retracing.db');
fs.mkdirSync(ARTIFACTS, { recursive: true });
const started = Date.now();
run(path.join(BUILD, 'examples/retracing'), ['--db', db, '--run', RUN], 60000);

const server = await startServer(db);
const browser = await launchBrowser(path.join(work, 'profile'));
const { page, errors } = await watchedPage(browser, { width: 1400, height: 1000 });

const api = (p, params) => apiJSON(server, p, params);
const shot = (name) => page.screenshot({ path: path.join(ARTIFACTS, `${name}.png`), fullPage: false });

async function main() {
  const fns = (await api('traces/functions', { run: RUN })).functions;
  const traces = (await api('traces/list', { run: RUN })).traces;
  check('store: the example\'s functions and traces', fns.length >= 6 && traces.length >= 15, `${fns.length} functions, ${traces.length} traces`);

  await page.goto(`${server.url}#traces`);
  check('traces: page loads', !!await tabLoaded(page, 'traces', 10000));
  check('traces: a card per function', await until(page, (n) => document.querySelectorAll('.trace-card').length === n, fns.length),
    `${await page.$$eval('.trace-card', (c) => c.length)} of ${fns.length}`);
  // Counters as the server has them.
  const square = fns.find((f) => f.function === 'square');
  const counters = await page.$eval('.trace-card[data-function="square"] .trace-counters', (e) => e.textContent);
  check('traces: counters (calls, cache hits, traces)', counters.includes(`${square.calls} calls`) &&
    counters.includes(`${square.cache_hits} cache hits`) && counters.includes(`${square.traces} traces`), counters);
  // The warning, prominently, on the functions that raised it (and only there).
  const warned = fns.filter((f) => f.warnings).map((f) => f.function).sort();
  const shown = (await page.$$eval('.trace-card', (cs) => cs.filter((c) => c.querySelector('.trace-warning')).map((c) => c.dataset.function))).sort();
  check('traces: the retracing warning where it was raised', warned.length >= 2 && JSON.stringify(shown) === JSON.stringify(warned),
    `${shown} vs ${warned}`);
  // Every reason verbatim, in order.
  const reasons = await page.$$eval('.trace-row .trace-reason', (tds) => tds.map((td) => td.firstChild.textContent));
  const want = fns.flatMap((f) => traces.filter((t) => t.function === f.function).map((t) => t.reason));
  check('traces: every reason verbatim', JSON.stringify(reasons) === JSON.stringify(want), `${reasons.length} of ${want.length}`);
  check('traces: a reason names the argument, old -> new, and the fix',
    reasons.some((r) => r.includes("input 0 'x' changed dim 0: 3 -> 4") && r.includes('Fix:')));
  // Signatures, call sites, graph links.
  const row = await page.$eval('.trace-row', (tr) => ({ sig: tr.querySelector('code').textContent, site: tr.children[3].textContent,
    link: tr.querySelector('a.graph-link').getAttribute('href') }));
  check('traces: signature, call site and a graph link', row.sig.includes('(') && row.site.includes('retracing.c:') &&
    row.link.startsWith(`#graphs?run=${RUN}&trace=`), JSON.stringify(row));
  await page.$eval('.trace-card[data-function="square"] details.signatures', (d) => { d.open = true; });
  const sigs = await page.$$eval('.trace-card[data-function="square"] .signature-table tbody tr', (trs) => trs.length);
  check('traces: the table of concrete signatures', sigs === square.concrete, `${sigs} rows, ${square.concrete} concrete`);
  check('traces: a timeline mark per trace', await page.$$eval('.trace-timeline .mark', (m) => m.length) === traces.length);
  await shot('traces');

  // Live: another process traces into the same run; the page shows it.
  const before = traces.length;
  run(path.join(BUILD, 'examples/retracing'), ['--db', db, '--run', RUN], 60000);
  const live = await until(page, (n) => Number(document.querySelector('.traces-page')?.dataset.traces) > n, before, 10000);
  check('traces: live, new traces shown without a reload', !!live);
  await shot('traces-live');
  check('no console errors or failed requests', errors.length === 0, errors.join(' | '));
}

await finishSuite('traces suite', main, { browser, server, work, started });
