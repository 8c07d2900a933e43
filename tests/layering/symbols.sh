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

# symbol -> layer that defines it
declare -A home
for o in */*.o */*/*.o; do
  [ -f "$o" ] || continue
  layer=${o%%/*}
  while read -r sym; do home[$sym]=$layer; done < <(nm -g --defined-only "$o" | awk '{print $3}')
done

fail=0
for o in */*.o */*/*.o; do
  [ -f "$o" ] || continue
  layer=${o%%/*}
  while read -r sym; do
    to=${home[$sym]:-}
    [ -n "$to" ] && [ "$to" != "$layer" ] || continue
    [[ $layer == ops && $sym == gb_opdef_* ]] && continue
    case " ${allowed[$layer]:-} " in *" $to "*) continue ;; esac
    echo "layering: ${o%.o} uses $sym, defined in $to/ ($layer -> $to); $layer may use only: ${allowed[$layer]:-core itself}"
    fail=1
  done < <(nm -u "$o" | awk '{print $2}')
done
[ $fail = 0 ] && echo "layering: no engine object uses a symbol of a higher layer"
exit $fail
