#!/usr/bin/env bash
# Runs every libFuzzer target built in BUILD (default build-fuzz; `make fuzz`
# builds them) for FUZZ_SECONDS each (default 30), FUZZ_JOBS of them at a
# time (default 1, so a shared machine keeps its other cores; CI gives one
# per core). FUZZ_TARGETS="idx ..." runs only those.
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

jobs="${FUZZ_JOBS:-1}"

# Fuzzes one target; its summary goes to the log's .line file, then the
# fuzzer's exit status to its .code file (a job reaped by `wait -n` has no
# status left to wait for), so results print as soon as they are ready, in
# target order whatever the order the targets finish in.
fuzz_one() {
  local bin="$1" name="$2"
  local work="$build/fuzz-corpus/$name" crashes="$build/fuzz-crashes/$name"
  local log="$build/fuzz-logs/$name.log"
  mkdir -p "$work" "$crashes" "$(dirname "$log")"
  # -timeout: an input that runs 30 s is a hang; 10 s was reached by a
  # 0.8 s input while real-time processes held both cores.
  local args=(-max_total_time="$seconds" -timeout=30 -rss_limit_mb=2048 -print_final_stats=1
              -artifact_prefix="$crashes/")
  local dict="$here/tests/fuzz/fuzz_$name.dict"
  [ -f "$dict" ] && args+=(-dict="$dict")
  local dirs=("$work" "$here/tests/fuzz/corpus/$name")
  [ -d "$here/tests/fuzz/regressions/$name" ] && dirs+=("$here/tests/fuzz/regressions/$name")

  "$bin" "${args[@]}" "${dirs[@]}" >"$log" 2>&1
  local code=$?
  local runs
  runs=$(grep -o 'number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' || echo "?")
  local line="fuzz $name: $runs runs in ${seconds}s, cov $(last_field cov "$log") ft $(last_field ft "$log"), corpus $(ls "$work" | wc -l)"
  if [ "$code" -eq 0 ]; then
    echo "$line, no crash" >"$log.line"
  else
    { echo "$line, FAILED (exit $code); the log's end ($log):"
      tail -40 "$log"
      echo "fuzz $name: input saved in $crashes/; once fixed, copy it into tests/fuzz/regressions/$name/"
    } >"$log.line"
  fi
  echo "$code" >"$log.code"   # last: it says the line is ready
}

shopt -s nullglob
bins=("$build"/fuzz/fuzz_*)
[ "${#bins[@]}" -gt 0 ] || { echo "fuzz: no targets in $build/fuzz (run make fuzz)"; exit 1; }
names=() printed=0 status=0
# Prints the results of the targets finished so far, in target order.
print_done() {
  while [ "$printed" -lt "${#names[@]}" ]; do
    local log="$build/fuzz-logs/${names[$printed]}.log"
    [ -f "$log.code" ] || return 0
    [ "$(cat "$log.code")" = 0 ] || status=1
    cat "$log.line"
    printed=$((printed + 1))
  done
}
for bin in "${bins[@]}"; do
  name="${bin##*/fuzz_}"
  if [ -n "${FUZZ_TARGETS:-}" ] && [[ " $FUZZ_TARGETS " != *" $name "* ]]; then continue; fi
  while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do wait -n; print_done; done
  rm -f "$build/fuzz-logs/$name.log.code"
  fuzz_one "$bin" "$name" &
  names+=("$name")
done
wait
print_done
for name in "${names[@]:$printed}"; do   # a fuzzer killed before it said anything
  echo "fuzz $name: no result (its run was killed)"
  status=1
done
exit $status
