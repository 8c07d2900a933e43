#!/usr/bin/env bash
# Runs every libFuzzer target built in BUILD (default build-fuzz; `make fuzz`
# builds them) for FUZZ_SECONDS each (default 30), one at a time with one
# job, so a shared machine keeps its other cores. FUZZ_TARGETS="idx ..."
# runs only those.
#
# Each target starts from its seeds (tests/fuzz/corpus/<name>/) and its
# regressions (tests/fuzz/regressions/<name>/), and grows a working corpus
# in BUILD/fuzz-corpus/<name>/ that later runs continue from. A crash, leak,
# timeout or failed check stops that target; its input is saved under
# BUILD/fuzz-crashes/<name>/ and the script fails after running the rest.
# One line per target gives executions, coverage (libFuzzer's cov: edges
# and ft: features) and the outcome.
set -uo pipefail

here="$(cd "$(dirname "$0")/.." && pwd)"
build="$(cd "${1:-build-fuzz}" && pwd)"
seconds="${FUZZ_SECONDS:-30}"
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"

# The last value of a libFuzzer status field ("cov", "ft") in a log.
last_field() { grep -o " $1: [0-9]*" "$2" | tail -1 | grep -o '[0-9]*$' || echo "?"; }

status=0
shopt -s nullglob
bins=("$build"/fuzz/fuzz_*)
[ "${#bins[@]}" -gt 0 ] || { echo "fuzz: no targets in $build/fuzz (run make fuzz)"; exit 1; }
for bin in "${bins[@]}"; do
  name="${bin##*/fuzz_}"
  if [ -n "${FUZZ_TARGETS:-}" ] && [[ " $FUZZ_TARGETS " != *" $name "* ]]; then continue; fi
  work="$build/fuzz-corpus/$name" crashes="$build/fuzz-crashes/$name"
  log="$build/fuzz-logs/$name.log"
  mkdir -p "$work" "$crashes" "$(dirname "$log")"
  args=(-max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1
        -artifact_prefix="$crashes/")
  dict="$here/tests/fuzz/fuzz_$name.dict"
  [ -f "$dict" ] && args+=(-dict="$dict")
  dirs=("$work" "$here/tests/fuzz/corpus/$name")
  [ -d "$here/tests/fuzz/regressions/$name" ] && dirs+=("$here/tests/fuzz/regressions/$name")

  "$bin" "${args[@]}" "${dirs[@]}" >"$log" 2>&1
  code=$?
  runs=$(grep -o 'number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' || echo "?")
  line="fuzz $name: $runs runs in ${seconds}s, cov $(last_field cov "$log") ft $(last_field ft "$log"), corpus $(ls "$work" | wc -l)"
  if [ "$code" -eq 0 ]; then
    echo "$line, no crash"
  else
    status=1
    echo "$line, FAILED (exit $code); the log's end ($log):"
    tail -40 "$log"
    echo "fuzz $name: input saved in $crashes/; once fixed, copy it into tests/fuzz/regressions/$name/"
  fi
done
exit $status
