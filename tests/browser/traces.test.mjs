// traces.test.mjs — the Traces page on the store examples/retracing writes
// (every cause of a retrace, the "function in a loop" mistake and the
// varying dim that raise the excessive-retracing warning): a card per
// function with its counters, the warning shown where it was raised, each
// reason verbatim as the server (and the terminal) words it, the concrete
// signatures, a link to each trace's graph; and live: traces written while
// the page is open appear within two seconds. Beside it, a run with no
// trace that sorts first (the page must open on the first run WITH
// traces) and a run "stack" (tests/browser/append_traces.c) whose function
// captures 40 variables and was relaxed by reduce_retracing: its captures
// fold into "captures 40 variables" (opened by a click), its header and
// its signature list count concrete functions alike, and its calls are
// exact although the function outlived the writer.
// Screenshots: traces.png, traces-captures.png, traces-live.png.

import fs from 'node:fs';
import path from 'node:path';
import { apiJSON, ARTIFACTS, BUILD, check, finishSuite, launchBrowser, requireBrowser, run, startServer, tabLoaded, tempDir, until, watchedPage } from './lib.mjs';

const RUN = 'retracing';
requireBrowser('webui_traces_browser');
const work = tempDir('gb-traces-');
const db = path.join(work, 'retracing.db');
fs.mkdirSync(ARTIFACTS, { recursive: true });
const started = Date.now();
run(path.join(BUILD, 'tests/append_scalar'), [db, 'aaa-untraced', 'loss', '1', '0.5']);
run(path.join(BUILD, 'examples/retracing'), ['--db', db, '--run', RUN], 60000);
const STACK_CALLS = 469;
run(path.join(BUILD, 'tests/append_traces'), [db, 'stack', String(STACK_CALLS)], 60000);

const server = await startServer(db);
const browser = await launchBrowser(path.join(work, 'profile'));
const { page, errors } = await watchedPage(browser, { width: 1400, height: 1000 });

const api = (p, params) => apiJSON(server, p, params);
const shot = (name) => page.screenshot({ path: path.join(ARTIFACTS, `${name}.png`), fullPage: false });

async function main() {
  const fns = (await api('traces/functions', { run: RUN })).functions;
  const traces = (await api('traces/list', { run: RUN })).traces;
  check('store: the example\'s functions and traces', fns.length >= 6 && traces.length >= 15, `${fns.length} functions, ${traces.length} traces`);

  check('store: the runs with traces', JSON.stringify((await api('traces/runs')).runs) === JSON.stringify([RUN, 'stack']));
  await page.goto(`${server.url}#traces`);
  check('traces: page loads', !!await tabLoaded(page, 'traces', 10000));
  check('traces: opens on the first run with traces, not the first run',
    await until(page, (r) => document.querySelector('.traces-page')?.dataset.run === r, RUN) &&
    await page.$eval('#traces-run', (s) => s.value) === RUN, await page.$eval('#traces-run', (s) => s.value));
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

  // A model's step: captures folded, concrete counts that agree, exact calls.
  // Unchecking the retracing run (a real click) leaves the untraced run
  // first: the page goes to the first run with traces again.
  await page.locator('label.run[data-run="retracing"] input').click();
  check('traces: the next run with traces when the shown one is unselected',
    !!await until(page, () => document.querySelector('.traces-page')?.dataset.run === 'stack'),
    await page.$eval('.traces-page', (v) => v.dataset.run));
  const stack = (await api('traces/functions', { run: 'stack' })).functions[0];
  check('store: exact calls of a function that outlived its writer', stack.calls === STACK_CALLS &&
    stack.cache_hits === STACK_CALLS - 2 && stack.traces === 2 && stack.concrete === 1, JSON.stringify(stack));
  const card = '.trace-card[data-function="dense_stack"]';
  const head = await page.$eval(`${card} .trace-counters`, (e) => e.textContent);
  check('traces: exact calls on the page', head.includes(`${STACK_CALLS} calls`) && head.includes(`${STACK_CALLS - 2} cache hits`), head);
  const listHead = await page.$eval(`${card} details.signatures summary`, (e) => e.textContent);
  check('traces: header and list count concrete functions alike',
    head.includes('1 concrete cached of 2 traced') && listHead === 'Concrete signatures: 1 concrete cached of 2 traced', `${head} | ${listHead}`);
  const sigCell = `${card} .trace-row:nth-child(2) td:nth-child(4)`;
  const cell = await page.$eval(sigCell, (td) => ({ code: td.querySelector('code').textContent,
    summary: td.querySelector('details.captures summary').textContent, open: td.querySelector('details.captures').open }));
  check('traces: a signature shows inputs and outputs, captures folded',
    cell.code === 'dense_stack(x: float32[-1,4]) -> (float32[-1,4])' && cell.summary === 'captures 40 variables' && !cell.open,
    JSON.stringify(cell));
  const reason = await page.$eval(`${card} .trace-row:nth-child(2) .trace-reason`, (td) => td.firstChild.textContent);
  check('traces: the relaxed trace says what reduce_retracing relaxed',
    /^input 0 'x' changed dim 0: 8 -> 16 \(float32\[8,4\] -> float32\[16,4\]\), against the closest cached signature dense_stack\(x: float32\[8,4\]\) -> \(float32\[8,4\]\); called at append_traces\.c:55; traced in \d+\.\d\d ms\. reduce_retracing/.test(reason) &&
    reason.endsWith(". reduce_retracing relaxed input 0 'x' dim 0 to -1 (float32[-1,4]): this one trace serves every size there, and replaces the traces it covers"), reason);
  await page.locator(`${sigCell} details.captures summary`).click();
  const names = await page.$$eval(`${sigCell} .capture-list li`, (lis) => lis.map((li) => li.textContent));
  const captured = Array.from({ length: 20 }, (_, i) => [`dense_${i}/bias`, `dense_${i}/kernel`]).flat().sort();
  check('traces: a click unfolds the 40 captured variables (in the order the graph read them)',
    JSON.stringify([...names].sort()) === JSON.stringify(captured), `${names.length}: ${names.slice(0, 2)} … ${names.slice(-1)}`);
  await page.locator(`${card} .trace-row:nth-child(2)`).scrollIntoViewIfNeeded();
  await shot('traces-captures');
  await page.locator('label.run[data-run="retracing"] input').click();
  await until(page, (r) => document.querySelector('.traces-page')?.dataset.run === r, RUN);

  // Live: another process traces into the same run; the page shows it.
  const before = traces.length;
  run(path.join(BUILD, 'examples/retracing'), ['--db', db, '--run', RUN], 60000);
  const live = await until(page, (n) => Number(document.querySelector('.traces-page')?.dataset.traces) > n, before, 10000);
  check('traces: live, new traces shown without a reload', !!live);
  await shot('traces-live');
  check('no console errors or failed requests', errors.length === 0, errors.join(' | '));
}

await finishSuite('traces suite', main, { browser, server, work, started });
