#!/usr/bin/env bash
# profile_two_ranks.sh BUILD MPIRUN FLAGS... — the profile of a 2-rank run:
# examples/profile_input_bound under mpirun profiles the same steps on both
# ranks and rank 0 stores one capture holding both: a track per rank's
# thread, every rank's allreduce waits on its training thread, and the
# export names both ranks' tracks.
set -euo pipefail
build="$1"; shift
work=$(mktemp -d /tmp/gb_profile_ranks_XXXXXX)
trap 'rm -rf "$work"' EXIT
"$@" "$build/examples/profile_input_bound" --db "$work/p.db" --run mpi --steps 6 --parallel 2 --map-us 1000
fail() { echo "profile_two_ranks: $*" >&2; exit 1; }
q() { sqlite3 "$work/p.db" "$1"; }
[ "$(q 'SELECT count(*) FROM profiles')" = 1 ] || fail "one capture expected, got $(q 'SELECT count(*) FROM profiles')"
threads=$(q 'SELECT threads FROM profiles')
for t in '"rank 0: training"' '"rank 1: training"'; do
  [[ "$threads" == *"$t"* ]] || fail "no track $t in $threads"
done
# the index of each rank's training thread, and its allreduce waits
for r in 0 1; do
  idx=$(python3 -c "import json,sys; print(json.loads(sys.argv[1]).index('rank $r: training'))" "$threads")
  waits=$(q "SELECT count(*) FROM profile_events WHERE kind = 'comm_wait' AND thread = $idx")
  steps=$(q "SELECT count(*) FROM profile_events WHERE kind = 'step' AND thread = $idx")
  [ "$waits" -ge 6 ] || fail "rank $r: $waits allreduce waits on its training thread (6 steps)"
  [ "$steps" = 7 ] || fail "rank $r: $steps step marks, 7 expected (6 steps and the end)"
  echo "rank $r: $waits allreduce waits, $steps step marks"
done
"$build/glassbox" export --db "$work/p.db" --run mpi --profile > "$work/trace.json"
grep -q '"name":"thread_name","pid":0,"tid":[0-9]*,"args":{"name":"rank 1: training"}' "$work/trace.json" ||
  fail "the export has no track for rank 1's training thread"
node "$(dirname "$0")/../profile/chrome_trace.test.mjs" "$work/trace.json" >/dev/null || fail "the export breaks the trace-event format"
echo "profile of 2 ranks: OK"
