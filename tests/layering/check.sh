#!/usr/bin/env bash
# The dependency rule of ARCHITECTURE.md, checked on every include line.
#
# Each source file belongs to an area (a framework layer, the framework's
# public headers, the store, the writer, the server); each include line
# reaches an area (found from the include's folder prefix, or by resolving
# it against the include roots) or a system library. The table below says
# which areas each area may reach; anything else fails the test with the
# file, line and rule broken.
#
#   check.sh SRC_ROOT [FILE:INCLUDE ...]
# The extra FILE:INCLUDE pairs are checked as if FILE had that include
# line: the test suite uses them to show a forbidden include is caught.
set -uo pipefail
root=${1:?usage: check.sh SRC_ROOT [FILE:INCLUDE ...]}
shift
cd "$root" || exit 2

layers="core ops autodiff graph nn optim train data io debug dist"

# What each area may include (besides itself). Inside framework the
# order is core < ops < autodiff < graph < nn < optim < train; data and
# debug sit beside autodiff, io and dist (data-parallel training) beside
# train, which may use them. webui/cli/model/ is the
# glassbox-model program (the `glassbox` commands on model files, and
# import, which writes a store): a program, like the examples, so it
# reaches the engine's public headers and the writer; the server and the
# glassbox program beside it still never do.
declare -A allowed=(
  [core]="public"
  [ops]="public core"
  [autodiff]="public core ops"
  [graph]="public core ops autodiff"
  [nn]="public core ops autodiff graph"
  [optim]="public core ops autodiff graph nn"
  [train]="public core ops autodiff graph nn optim data io debug dist"
  [data]="public core ops"
  [debug]="public core ops"
  [io]="public core ops autodiff graph nn optim data"
  [dist]="public core ops autodiff graph nn optim data"
  [public]=""
  [store]="lib:sqlite"
  [writer]="store public lib:sqlite lib:png"
  [server]="store lib:mhd"
  [cli-model]="server store writer public lib:mhd"
)

# Sets `area` to the area of a file path (relative to the root), or "".
area_of() {
  local p=$1 l x
  area=""
  case $p in
    framework/*/*)
      l=${p#framework/}; l=${l%%/*}; area=framework-other
      for x in $layers; do [ "$x" = "$l" ] && area=$l; done ;;
    framework/*) area=public ;;
    summary/store/*) area=store ;;
    summary/writer/*) area=writer ;;
    summary/*) area=store ;;
    webui/cli/model/*) area=cli-model ;;
    webui/*) area=server ;;
  esac
}

# Sets `area` to what an include reaches from file f: system libraries by
# name, then the include resolved next to f, then against the include
# roots; "" for a system or generated header, not ours to judge.
target_of() {
  local f=$1 inc=$2 base path
  case $inc in
    sqlite3.h) area=lib:sqlite; return ;;
    microhttpd.h) area=lib:mhd; return ;;
    png.h) area=lib:png; return ;;
  esac
  area=""
  for base in "${f%/*}" framework summary summary/store summary/writer webui; do
    if [ -f "$base/$inc" ]; then
      path=$base/$inc
      while [[ $path =~ (^|/)[^/]+/\.\./ ]]; do path=${path/${BASH_REMATCH[0]}/${BASH_REMATCH[1]}}; done
      area_of "$path"
      return
    fi
  done
}

fail=0
check() {
  local f=$1 line=$2 inc=$3 from
  area_of "$f"; from=$area
  [ -n "$from" ] || return 0
  target_of "$f" "$inc"
  [ -n "$area" ] && [ "$area" != "$from" ] || return 0
  case " ${allowed[$from]:-} " in *" $area "*) return 0 ;; esac
  echo "layering: $f:$line includes \"$inc\" ($from -> $area); $from may include only: ${allowed[$from]:-nothing outside itself}"
  fail=1
}

re='^[[:space:]]*#[[:space:]]*include[[:space:]]*[<"]([^>"]+)[>"]'
while IFS= read -r hit; do
  f=${hit%%:*}; rest=${hit#*:}; line=${rest%%:*}; text=${rest#*:}
  [[ $text =~ $re ]] && check "$f" "$line" "${BASH_REMATCH[1]}"
done < <(grep -rnE "$re" --include='*.c' --include='*.h' --include='*.def' framework summary webui)

for extra in "$@"; do
  check "${extra%%:*}" injected "${extra#*:}"
done

[ $fail = 0 ] && echo "layering: every include follows the dependency rule"
exit $fail
