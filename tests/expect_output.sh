#!/usr/bin/env bash
# Runs a program and checks that its output (stdout and stderr) contains
# every given text. CTest's PASS_REGULAR_EXPRESSION passes when any one
# pattern matches; this needs all of them. Runs of spaces and newlines are
# read as one space, so wrapped lines still match.
#   expect_output.sh PROGRAM [ARG...] -- TEXT...
set -u
cmd=()
while [ $# -gt 0 ] && [ "$1" != "--" ]; do cmd+=("$1"); shift; done
shift
out=$("${cmd[@]}" 2>&1); code=$?
flat=$(tr -s ' \n' '  ' <<<"$out")
missing=0
for want in "$@"; do
  if ! grep -qF -- "$want" <<<"$flat"; then
    echo "MISSING: $want"
    missing=$((missing + 1))
  fi
done
if [ "$code" -ne 0 ] || [ "$missing" -ne 0 ]; then
  echo "exit $code, $missing text(s) missing; the output was:"
  echo "$out"
  exit 1
fi
