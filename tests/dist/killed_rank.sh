#!/usr/bin/env bash
# A rank killed in the middle of training: the survivors must exit non-zero
# within a bound, saying which rank was lost — never hang.
#   killed_rank.sh MODE BOUND MPIRUN [MPIRUN ARGS...] -- PROGRAM [ARGS...]
# MODE term: plain mpirun, which ends the job itself when a rank dies (it
#   sends the others SIGTERM); the survivor's collective under way fails
#   at once, naming the rank.
# MODE timeout: mpirun --enable-recovery, which lets the survivors run on:
#   only glassbox's collective timeout (GB_DIST_TIMEOUT) ends their wait.
#   In this mode mpirun exits 0 whatever its ranks did (Open MPI 4.1), so
#   each rank runs under a shell that reports the rank's own exit code.
# Rank 1 is killed with SIGKILL once rank 0 has printed that it trains.
set -u
mode=$1 bound=$2
shift 2
launcher=()
while [ $# -gt 0 ] && [ "$1" != "--" ]; do launcher+=("$1"); shift; done
shift
program=$1
wrap=()
if [ "$mode" = timeout ]; then
  launcher+=(--enable-recovery)
  wrap=(sh -c '"$@"; code=$?; echo "rank $OMPI_COMM_WORLD_RANK exited with code $code"; exit $code' sh)
fi
out=$(mktemp)
trap 'rm -f "$out"' EXIT

"${launcher[@]}" "${wrap[@]}" "$@" >"$out" 2>&1 &
job=$!

# The pid of rank r of our job: the program (not a shell around it) whose
# environment says so.
rank_pid() {
  local p exe
  exe=$(readlink -f "$program")
  for p in $(pgrep -f -- "$program"); do
    [ "$(readlink -f "/proc/$p/exe" 2>/dev/null)" = "$exe" ] || continue
    tr '\0' '\n' 2>/dev/null <"/proc/$p/environ" | grep -qx "OMPI_COMM_WORLD_RANK=$1" && { echo "$p"; return; }
  done
}

for _ in $(seq 300); do grep -q "^training " "$out" && break; sleep 0.1; done
victim=$(rank_pid 1)
if ! grep -q "^training " "$out" || [ -z "$victim" ]; then
  echo "training did not start, or rank 1 was not found; the output was:"; cat "$out"
  kill "$job" 2>/dev/null; exit 1
fi
sleep 1
ms() { echo $(( $(date +%s%N) / 1000000 )); }
start=$(ms)
kill -KILL "$victim"
echo "killed rank 1 (pid $victim)"

# Wait for the job, at most `bound` seconds.
while kill -0 "$job" 2>/dev/null; do
  if (( $(ms) - start > bound * 1000 )); then
    echo "FAIL: the job still runs $bound s after rank 1 was killed; the output was:"; cat "$out"
    kill -KILL "$job" 2>/dev/null; exit 1
  fi
  sleep 0.1
done
wait "$job"; code=$?
took=$(( $(ms) - start ))
echo "the job ended $took ms after the kill, exit code $code"
cat "$out"
fail=0
if [ "$mode" = timeout ]; then
  grep -q "rank 0 exited with code [1-9]" "$out" || { echo "FAIL: rank 0 did not exit non-zero"; fail=1; }
else
  [ "$code" -ne 0 ] || { echo "FAIL: the job exited 0"; fail=1; }
fi
grep -q "UnavailableError: rank 0: .*rank 1 (pid $victim on [^)]*) has exited" "$out" ||
  { echo "FAIL: no message from rank 0 naming rank 1 (pid $victim) as exited"; fail=1; }
if [ "$mode" = timeout ]; then
  grep -q "did not complete within" "$out" || { echo "FAIL: the timeout did not fire"; fail=1; }
else
  grep -q "the launcher is ending the job (SIGTERM)" "$out" || { echo "FAIL: no SIGTERM message"; fail=1; }
fi
exit $fail
