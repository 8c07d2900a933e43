// chrome_trace.test.mjs — `glassbox export --profile --format chrome-trace`
// loaded by a JSON parser and held to the trace-event format that Perfetto
// and chrome://tracing read: every event has a known ph; complete events
// ("X") a numeric ts and dur >= 0 and integer pid and tid; instants ("i")
// ts and a scope; counters ("C") ts and numeric args; metadata ("M") the
// process and thread names. And it says what the store holds: a track per
// thread, the training thread's "next batch" waits, the prefetch thread's
// maps, the ops' count. Also `make bench`'s schema check (scripts/bench.sh).
// Usage: node chrome_trace.test.mjs [TRACE.json]  (no argument: makes one)

import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const BUILD = process.env.GB_BUILD_DIR || path.resolve(path.dirname(new URL(import.meta.url).pathname), '../../build');
let failures = 0;
function check(name, ok, detail = '') {
  console.log(`${ok ? 'ok' : 'not ok'} - ${name}${ok || !detail ? '' : `\n    ${detail}`}`);
  if (!ok) failures++;
}

// The schema of one event; the first problem, or null.
export function eventProblem(e) {
  const int = (v) => Number.isInteger(v);
  const nonNeg = (v) => typeof v === 'number' && Number.isFinite(v) && v >= 0;
  if (typeof e !== 'object' || e === null) return 'not an object';
  if (!['X', 'i', 'C', 'M'].includes(e.ph)) return `ph ${JSON.stringify(e.ph)}`;
  if (!int(e.pid) || !int(e.tid)) return 'pid/tid not integers';
  if (typeof e.name !== 'string' || !e.name) return 'no name';
  if (e.ph === 'M') return ['process_name', 'thread_name'].includes(e.name) && typeof e.args?.name === 'string' ? null : 'metadata';
  if (!nonNeg(e.ts)) return `ts ${e.ts}`;
  if (e.ph === 'X') return nonNeg(e.dur) ? null : `dur ${e.dur}`;
  if (e.ph === 'i') return ['t', 'p', 'g'].includes(e.s) ? null : `scope ${e.s}`;
  return e.args && Object.values(e.args).every((v) => typeof v === 'number') ? null : 'counter args';
}

function traceOf(file) {
  if (file) return fs.readFileSync(file, 'utf8');
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'gb-chrome-trace-'));
  const db = path.join(work, 'p.db');
  execFileSync(path.join(BUILD, 'examples/profile_input_bound'), ['--db', db, '--run', 'serial', '--steps', '5'], { stdio: 'ignore' });
  const out = execFileSync(path.join(BUILD, 'glassbox'), ['export', '--db', db, '--run', 'serial', '--profile', '--format', 'chrome-trace'],
    { maxBuffer: 1 << 30 }).toString();
  const sql = execFileSync('sqlite3', [db, "SELECT kind, count(*) FROM profile_events GROUP BY kind"]).toString();
  fs.rmSync(work, { recursive: true, force: true });
  return { out, counts: Object.fromEntries(sql.trim().split('\n').map((l) => l.split('|')).map(([k, n]) => [k, Number(n)])) };
}

const made = traceOf(process.argv[2]);
const text = typeof made === 'string' ? made : made.out;
let trace = null;
try { trace = JSON.parse(text); } catch (e) { check('the export is JSON', false, e.message); }
if (trace) {
  check('the export is JSON with traceEvents', Array.isArray(trace.traceEvents), Object.keys(trace).join(','));
  const events = trace.traceEvents ?? [];
  const bad = events.map((e, i) => [i, eventProblem(e)]).filter(([, p]) => p);
  check(`every one of ${events.length} events has ph, ts, dur, pid, tid as the format says`, bad.length === 0,
    bad.slice(0, 3).map(([i, p]) => `event ${i}: ${p}: ${JSON.stringify(events[i])}`).join('\n    '));
  const threads = events.filter((e) => e.ph === 'M' && e.name === 'thread_name').map((e) => e.args.name);
  check('a named track per thread', threads.length > 0 && new Set(events.filter((e) => e.ph !== 'M').map((e) => e.tid)).size <= threads.length,
    threads.join(','));
  if (typeof made !== 'string') {
    check('the training and prefetch tracks', threads.includes('training') && threads.includes('prefetch'), threads.join(','));
    const X = events.filter((e) => e.ph === 'X');
    const byCat = (c) => X.filter((e) => e.cat === c).length;
    check('every op of the store', byCat('op') === made.counts.op, `${byCat('op')} vs ${made.counts.op}`);
    check('every wait for the next batch, on the training thread', byCat('input_wait') === made.counts.input_wait &&
      X.filter((e) => e.cat === 'input_wait').every((e) => threads[e.tid] === 'training'));
    check('the maps on the prefetch thread', X.filter((e) => e.cat === 'map').some((e) => threads[e.tid] === 'prefetch'));
    check('a step mark per step', events.filter((e) => e.ph === 'i').length === made.counts.step);
  }
}
console.log(failures ? `${failures} failed` : 'all passed');
process.exit(failures ? 1 : 0);
