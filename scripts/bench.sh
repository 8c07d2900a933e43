#!/usr/bin/env bash
# Runs every benchmark program in <build>/bench/ (built from bench/*.c),
# then every bench/*.bench.mjs (pages measured in chromium) with node.
# Each prints its own lines in the format of DESIGN §7:
#   bench <name> glassbox=<value> <peer>=<value> ratio=<r> unit=<unit>
# and measures its peer (PyTorch via /usr/bin/python3, or plain SQLite) in
# the same run. Progress and notes go to stderr; stdout carries only lines.
#
# The benchmarks of the kernels that have a version per instruction-set
# level run once per level (GB_ISA=v2, v3, v4; a level the CPU lacks is
# skipped by the program itself), each line naming its level.
set -euo pipefail
build="${1:-build}"
per_isa=" eager_bench traced_bench graph_passes_bench fmnist_bench "
status=0
run() { # name, then the environment and the program
  local name="$1"; shift
  echo "== $name" >&2
  env "$@" || { echo "benchmark $name failed" >&2; status=1; }
}
for b in "$build"/bench/*; do
  [ -x "$b" ] || continue
  name="$(basename "$b")"
  if [[ "$per_isa" == *" $name "* ]]; then
    for level in v2 v3 v4; do run "$name at $level" GB_ISA="$level" "$b"; done
  else
    run "$name" "$b"
  fi
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
