#!/usr/bin/env bash
# No call runs up a layer: the include check (check.sh) sees headers, this
# sees the linker's view. For every object file of the engine, each symbol
# it uses must be defined in its own layer or in one it may depend on
# (the same table as check.sh). The one exception is the op table: it
# lists every op's descriptor (gb_opdef_*), wherever the op's kernel lives
# (optim/'s fused updates, debug/'s CheckNumerics).
#
#   symbols.sh OBJECT_DIR   (<build>/CMakeFiles/glassbox_framework.dir/framework)
set -uo pipefail
dir=${1:?usage: symbols.sh OBJECT_DIR}
cd "$dir" || { echo "symbols: no object directory $dir (build first)"; exit 2; }

declare -A allowed=(
  [core]=""
  [ops]="core"
  [autodiff]="core ops"
  [graph]="core ops autodiff"
  [nn]="core ops autodiff graph"
  [optim]="core ops autodiff graph nn"
  [train]="core ops autodiff graph nn optim data io debug dist"
  [data]="core ops"
  [debug]="core ops"
  [io]="core ops autodiff graph nn optim data"
  [dist]="core ops autodiff graph nn optim data"
)

# Two runs of nm over every object (nm -A names each line's file), one
# awk over their output: a pair of nm runs per object and a bash loop per
# symbol took seconds, the most of any static check.
objs=()
for o in */*.o */*/*.o; do [ -f "$o" ] && objs+=("$o"); done
[ ${#objs[@]} -gt 0 ] || { echo "symbols: no object files under $dir (build first)"; exit 2; }
rules=$(for layer in "${!allowed[@]}"; do echo "$layer ${allowed[$layer]}"; done)

# Each line: "D FILE SYMBOL" (defined) or "U FILE SYMBOL" (used).
{ nm -A -g --defined-only "${objs[@]}" | awk '{sub(/:.*/, "", $1); print "D", $1, $3}'
  nm -A -u "${objs[@]}" | awk '{sub(/:.*/, "", $1); print "U", $1, $NF}'
} | awk -v rules="$rules" '
  function layer_of(o) { sub(/\/.*/, "", o); return o }
  BEGIN {
    n = split(rules, lines, "\n")
    for (i = 1; i <= n; i++) {
      k = split(lines[i], f, " ")
      may[f[1]] = ""
      for (j = 2; j <= k; j++) ok[f[1], f[j]] = 1
      for (j = 2; j <= k; j++) may[f[1]] = may[f[1]] (j > 2 ? " " : "") f[j]
    }
  }
  $1 == "D" { home[$3] = layer_of($2); next }
  {
    layer = layer_of($2); to = home[$3]
    if (to == "" || to == layer) next
    if (layer == "ops" && $3 ~ /^gb_opdef_/) next
    if ((layer, to) in ok) next
    o = $2; sub(/\.o$/, "", o)
    printf "layering: %s uses %s, defined in %s/ (%s -> %s); %s may use only: %s\n", o, $3, to,
           layer, to, layer, may[layer] == "" ? "core itself" : may[layer]
    fail = 1
  }
  END {
    if (!fail) print "layering: no engine object uses a symbol of a higher layer"
    exit fail
  }'
