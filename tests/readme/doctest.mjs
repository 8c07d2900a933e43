// doctest.mjs — README.md's commands and C examples as tests, as Rust runs
// its doc tests: a README that drifts from the program fails `make test`.
//
//   node doctest.mjs extract README.md OUT_DIR   (CMake, at configure time)
//       writes each C block as a program (OUT_DIR/<section>_<k>.c) and
//       OUT_DIR/readme.cmake, which builds them and adds a test per section;
//   node doctest.mjs run README.md SECTION        (that test)
//       builds nothing: runs the section's C programs and shell commands.
//
// Sections are the `## ` headings (a `### ` belongs to the one above).
//
// C blocks (```c). One with a main() is compiled as it stands. Any other
// is a fragment, compiled inside tests/readme/context/<section>_<k>.c: its
// file-scope definitions (a `static` function at depth 0) where the context
// says /* README_DEFINITIONS */, the rest where it says
// /* README_STATEMENTS */, with #line directives, so a compiler error names
// the README's own line. The context supplies what the fragment assumes (a
// model, data) and checks what its comments promise.
//
// Shell blocks (```sh) run line by line (a trailing `\` continues a line)
// in a scratch directory of the section, where `build` is the build
// directory, with bash. A command passes when it exits 0, or with the code
// its comment gives ("# exits 3: ..."), and its output holds the text of
// the comment lines right below it that start with "#   " (spaces and line
// breaks compared loosely; a trailing "..." ends the text there).
//
// What the harness changes, so that `make test` stays short and runs
// beside other tests (each is printed before the command runs):
//   - training: `--epochs N` becomes `--epochs 1`, and the Fashion-MNIST
//     examples get `--limit 2000` (the first 2,000 images);
//   - ports: `--serve 6006` becomes `--serve 0` and `glassbox serve` gets
//     `--port 0` (a free port: 6006 may be taken);
//   - `glassbox serve`, which runs until stopped, is started, probed (GET
//     / and /api/runs must answer 200, with the token the address printed
//     carries beyond loopback, and 401 without it) and stopped with
//     SIGTERM (exit 0);
//   - mpirun gets `--allow-run-as-root --oversubscribe` when the README's
//     comment says so (as root, or on fewer cores than ranks), and runs
//     with leak checks off under ASan (Open MPI keeps its allocations to
//     exit, as tests/dist.cmake says);
//   - `make demo` and `make test` are not run: the doc tests are part of
//     the second, and the first is the second's demo_browser test.

import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';

// ---- reading the README ------------------------------------------------------------

const slug = (title) => title.toLowerCase().replace(/[^a-z0-9]+/g, '_').replace(/^_|_$/g, '');

// [{title, slug, blocks: [{lang, lines, line (1-based, first code line)}]}]
export function parseReadme(text) {
  const sections = [];
  let section = null, block = null;
  text.split('\n').forEach((raw, i) => {
    if (block) {
      if (/^```\s*$/.test(raw)) { section.blocks.push(block); block = null; } else block.lines.push(raw);
      return;
    }
    const fence = raw.match(/^```(\w*)\s*$/);
    if (fence && section) { block = { lang: fence[1], lines: [], line: i + 2 }; return; }
    const head = raw.match(/^## (.+)$/);
    if (head) sections.push(section = { title: head[1].trim(), slug: slug(head[1]), blocks: [] });
  });
  return sections;
}

// ---- C blocks ------------------------------------------------------------------------

const depthChange = (line) => (line.match(/{/g) || []).length - (line.match(/}/g) || []).length;

// A fragment's file-scope definitions and its statements, each as lines
// with their README line numbers.
function splitFragment(block) {
  const defs = [], stmts = [];
  let depth = 0, inDef = false;
  block.lines.forEach((text, k) => {
    const line = { text, at: block.line + k };
    if (depth === 0 && /^static\s/.test(text)) inDef = true;
    (inDef ? defs : stmts).push(line);
    depth += depthChange(text);
    if (inDef && depth === 0 && /}\s*$/.test(text)) inDef = false;
  });
  return { defs, stmts };
}

const withLines = (lines, readme) => lines.map((l) => `#line ${l.at} "${readme}"\n${l.text}`).join('\n');

function cProgram(block, contextFile, readme) {
  if (block.lines.some((l) => /\bint\s+main\s*\(/.test(l))) return withLines(block.lines.map((text, k) => ({ text, at: block.line + k })), readme);
  if (!fs.existsSync(contextFile))
    throw new Error(`${readme}:${block.line}: this C fragment needs a context to compile in: write ${contextFile}`);
  const { defs, stmts } = splitFragment(block);
  const context = fs.readFileSync(contextFile, 'utf8');
  const resume = (mark) => `\n#line ${context.slice(0, context.indexOf(mark)).split('\n').length + 1} "${contextFile}"\n`;
  let program = context;
  for (const [mark, lines] of [['/* README_DEFINITIONS */', defs], ['/* README_STATEMENTS */', stmts]]) {
    if (!context.includes(mark)) {
      if (lines.length) throw new Error(`${contextFile}: no ${mark} line for the fragment at ${readme}:${block.line}`);
      continue;
    }
    program = program.replace(mark, withLines(lines, readme) + resume(mark));
  }
  return program;
}

function extract(readme, outDir) {
  const contextDir = path.join(path.dirname(new URL(import.meta.url).pathname), 'context');
  fs.mkdirSync(outDir, { recursive: true });
  const cmake = ['# Generated by tests/readme/doctest.mjs from README.md: do not edit.'];
  for (const s of parseReadme(fs.readFileSync(readme, 'utf8'))) {
    const code = s.blocks.filter((b) => b.lang === 'c' || b.lang === 'sh');
    if (!code.length) continue;
    const programs = [];
    s.blocks.filter((b) => b.lang === 'c').forEach((b, k) => {
      const name = `readme_${s.slug}_${k + 1}`;
      const file = path.join(outDir, `${name}.c`);
      const text = `/* Generated from README.md (section "${s.title}") by tests/readme/doctest.mjs. */\n` +
        cProgram(b, path.join(contextDir, `${s.slug}_${k + 1}.c`), readme) + '\n';
      // Rewritten only when changed, so an unchanged README rebuilds nothing.
      if (!fs.existsSync(file) || fs.readFileSync(file, 'utf8') !== text) fs.writeFileSync(file, text);
      programs.push(name);
      cmake.push(`gb_readme_program(${name} ${file})`);
    });
    cmake.push(`gb_readme_section(${s.slug} "${s.title.replace(/"/g, '\\"')}" ${programs.join(' ')})`);
  }
  fs.writeFileSync(path.join(outDir, 'readme.cmake'), cmake.join('\n') + '\n');
}

// ---- shell blocks ---------------------------------------------------------------------

// [{command, comment, expect: text|null, line}]
export function shellCommands(block) {
  const out = [];
  for (let k = 0; k < block.lines.length; k++) {
    let text = block.lines[k];
    const line = block.line + k;
    const expectLine = text.match(/^#\s{3}(.*)$/);
    if (expectLine && out.length) {
      const last = out[out.length - 1];
      last.expect = (last.expect ? `${last.expect} ` : '') + expectLine[1].trim();
      continue;
    }
    if (/^\s*(#|$)/.test(text)) continue;
    while (/\\\s*$/.test(text) && k + 1 < block.lines.length) text = text.replace(/\\\s*$/, ' ') + block.lines[++k].trim();
    const hash = text.search(/\s#/);
    out.push({ command: (hash >= 0 ? text.slice(0, hash) : text).trim().replace(/\s+/g, ' '),
      comment: hash >= 0 ? text.slice(hash + 2).trim() : '', expect: null, line });
  }
  return out;
}

const isRoot = () => process.getuid?.() === 0;

// The command as the harness runs it, and what it changed (see the top).
function adapt(c, block) {
  let cmd = c.command;
  const notes = [];
  const trains = /examples\/(fashion_mnist_\w+|nan_hunt|csv_regression|functional_tickets|imbalanced_classes|hparam_sweep)\b/.test(cmd);
  if (trains && /--epochs\s+\d+/.test(cmd) && !/--epochs 1\b/.test(cmd)) {
    cmd = cmd.replace(/--epochs\s+\d+/, '--epochs 1');
    notes.push('--epochs 1');
  }
  if (/examples\/fashion_mnist_\w+/.test(cmd) && !/--limit\b/.test(cmd)) {
    cmd = cmd.replace(/(examples\/fashion_mnist_\w+)/, '$1 --limit 2000');
    notes.push('--limit 2000');
  }
  if (/--serve\s+\d+/.test(cmd)) { cmd = cmd.replace(/--serve\s+\d+/, '--serve 0'); notes.push('--serve 0'); }
  const server = /glassbox serve\b/.test(cmd) && !/--help\b/.test(cmd);
  if (server && !/--port\b/.test(cmd)) { cmd += ' --port 0'; notes.push('--port 0'); }
  if (/^mpirun\b/.test(cmd) && (isRoot() || os.cpus().length < 2) &&
      block.lines.some((l) => /--allow-run-as-root --oversubscribe/.test(l))) {
    cmd = cmd.replace(/^mpirun\b/, 'mpirun --allow-run-as-root --oversubscribe');
    notes.push('--allow-run-as-root --oversubscribe');
  }
  const env = /^mpirun\b/.test(cmd) ? { ASAN_OPTIONS: 'detect_leaks=0:abort_on_error=1' } : {};
  const exit = Number(c.comment.match(/\bexits (\d+)\b/)?.[1] ?? 0);
  return { cmd, notes, server, exit, env };
}

const loose = (s) => s.replace(/\s+/g, ' ').trim();

// Whether the output holds the expected text ("..." at its end: a prefix).
function holds(output, expect) {
  const want = loose(expect).replace(/\s*\.\.\.$/, '');
  return loose(output).includes(want);
}

function get(port, route, headers = {}) {
  return new Promise((resolve) => {
    const req = http.get({ host: '127.0.0.1', port, path: route, headers, timeout: 10000 }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode));
    });
    req.on('error', (e) => resolve(`error ${e.message}`));
    req.on('timeout', () => { req.destroy(); resolve('timeout'); });
  });
}

// A server: started, its port read from its first line, probed, stopped.
function runServer(cmd, cwd) {
  return new Promise((resolve) => {
    const child = spawn('bash', ['-c', `exec ${cmd}`], { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '', probed = false;
    const finish = (ok, why) => { clearTimeout(timer); child.kill('SIGTERM'); child.on('exit', (code) => resolve({ ok: ok && code === 0, why: why || (code !== 0 ? `exit ${code} after SIGTERM` : ''), out })); };
    const timer = setTimeout(() => finish(false, 'no "serving http://...:PORT" line within 30 s'), 30000);
    const onData = async (d) => {
      out += d;
      const m = out.match(/serving http:\/\/[^:]+:(\d+)\/(?:\?token=([\w.-]+))? /);
      if (!m || probed) return;
      probed = true;
      const port = Number(m[1]);
      // Beyond loopback the address printed carries a token: without it
      // the server refuses (401), with it (as a cookie) it serves.
      const cookie = m[2] ? { Cookie: `gb_token=${m[2]}` } : {};
      const statuses = [await get(port, '/', cookie), await get(port, '/api/runs', cookie)];
      const refused = m[2] ? await get(port, '/api/runs') : 401;
      const ok = statuses.every((s) => s === 200) && refused === 401;
      finish(ok, ok ? '' : `GET / and /api/runs answered ${statuses.join(', ')}${m[2] ? `; without the token ${refused}` : ''}`);
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', (d) => { out += d; });
    child.on('exit', (code) => { if (!probed) { clearTimeout(timer); resolve({ ok: false, why: `exited ${code} before serving`, out }); } });
  });
}

async function runSection(readme, wanted, buildDir) {
  const s = parseReadme(fs.readFileSync(readme, 'utf8')).find((x) => x.slug === wanted);
  if (!s) throw new Error(`README.md has no section '${wanted}'`);
  const scratch = path.join(buildDir, 'tests', 'readme-scratch', s.slug);
  fs.rmSync(scratch, { recursive: true, force: true });
  fs.mkdirSync(scratch, { recursive: true });
  fs.symlinkSync(buildDir, path.join(scratch, 'build'));
  let failed = 0, ran = 0, skipped = 0;
  const fail = (where, what, output) => {
    failed++;
    console.log(`FAIL ${where}: ${what}`);
    if (output) console.log(output.split('\n').map((l) => `    | ${l}`).join('\n'));
  };
  // C blocks: the programs CMake built from them.
  s.blocks.filter((b) => b.lang === 'c').forEach((b, k) => {
    const exe = path.join(buildDir, 'readme', `readme_${s.slug}_${k + 1}`);
    const r = spawnSync(exe, [], { cwd: scratch, encoding: 'utf8', timeout: 300000 });
    ran++;
    const where = `README.md:${b.line} (C block ${k + 1})`;
    if (r.status !== 0) fail(where, `exit ${r.status ?? r.signal ?? r.error?.message}`, (r.stdout || '') + (r.stderr || ''));
    else console.log(`ok   ${where}`);
  });
  for (const b of s.blocks.filter((x) => x.lang === 'sh')) {
    for (const c of shellCommands(b)) {
      const where = `README.md:${c.line}`;
      if (/^make\s+(demo|test)\b/.test(c.command)) { console.log(`skip ${where}: ${c.command} (not run from inside make test)`); skipped++; continue; }
      const a = adapt(c, b);
      console.log(`run  ${where}: ${a.cmd}${a.notes.length ? `   [harness: ${a.notes.join(', ')}]` : ''}`);
      ran++;
      if (a.server) {
        const r = await runServer(a.cmd, scratch);
        if (!r.ok) fail(where, r.why, r.out);
        continue;
      }
      const r = spawnSync('bash', ['-c', a.cmd], { cwd: scratch, encoding: 'utf8', timeout: 600000, maxBuffer: 64 << 20,
        env: { ...process.env, ...a.env } });
      const output = (r.stdout || '') + (r.stderr || '');
      if (r.status !== a.exit) fail(where, `exit ${r.status ?? r.signal}, the README says ${a.exit}`, output);
      else if (c.expect && !holds(output, c.expect)) fail(where, `the output lacks what the README shows:\n    ${c.expect}`, output);
    }
  }
  console.log(`${s.title}: ${ran - failed} of ${ran} passed${skipped ? `, ${skipped} not run` : ''}`);
  if (!ran && !skipped) { console.log('FAIL: the section has code blocks but nothing ran'); failed++; }
  return failed ? 1 : 0;
}

const [mode, readme, arg] = process.argv.slice(2);
if (mode === 'extract') extract(readme, arg);
else if (mode === 'run') process.exitCode = await runSection(readme, arg, process.env.GB_BUILD_DIR || process.cwd());
else if (mode) { console.error('usage: doctest.mjs extract README.md OUT_DIR | run README.md SECTION'); process.exitCode = 2; }
