#!/usr/bin/env bash
# Runs every benchmark program in <build>/bench/ (built from bench/*.c),
# then every bench/*.bench.mjs (pages measured in chromium) with node.
# Each prints its own lines in the format of DESIGN §7:
#   bench <name> glassbox=<value> <peer>=<value> ratio=<r> unit=<unit>
# and measures its peer (PyTorch via /usr/bin/python3, or plain SQLite) in
# the same run. Progress and notes go to stderr; stdout carries only lines.
set -euo pipefail
build="${1:-build}"
status=0
for b in "$build"/bench/*; do
  [ -x "$b" ] || continue
  echo "== $(basename "$b")" >&2
  "$b" || { echo "benchmark $(basename "$b") failed" >&2; status=1; }
done
# The dashboard's pages, measured in chromium (bench/*.bench.mjs): node
# drives the server and the browser the browser tests use.
here="$(cd "$(dirname "$0")/.." && pwd)"
for b in "$here"/bench/*.bench.mjs; do
  [ -f "$b" ] || continue
  echo "== $(basename "$b")" >&2
  node "$b" "$build" || { echo "benchmark $(basename "$b") failed" >&2; status=1; }
done
exit $status
