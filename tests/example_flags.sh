#!/usr/bin/env bash
# The examples' shared flag parser (examples/support/flags.c) as a person
# meets it: every example answers --help with its usage on stdout and
# exit 0; a flag it does not take is named, with the reason when another
# example takes it; a malformed value is named; all with exit 2.
#   example_flags.sh BUILD_EXAMPLES_DIR
set -u
dir=$1
fail=0
expect() {   # expect CODE TEXT -- PROGRAM ARGS...: exit code and an exact line
  local code=$1 want=$2; shift 3
  local out rc
  out=$("$@" 2>&1); rc=$?
  if [ "$rc" -ne "$code" ] || ! grep -qxF -- "$want" <<<"$out"; then
    echo "FAIL: $* (exit $rc, expected $code and the line '$want'); the output was:"
    echo "$out"
    fail=1
  fi
}
for p in fashion_mnist_mlp fashion_mnist_cnn fashion_mnist_fit nan_hunt retracing \
         summary_showcase csv_regression functional_tickets imbalanced_classes polymorphic fortune_topics \
         health_clinic; do
  expect 0 "usage: $p [options]" -- "$dir/$p" --help
  expect 0 "usage: $p [options]" -- "$dir/$p" -h
  expect 2 "$p: unknown flag '--no-such-flag'" -- "$dir/$p" --no-such-flag
done
expect 2 "fashion_mnist_fit: --traced is not a flag of fashion_mnist_fit: fit traces its train and test steps already (--eager runs them op by op); --traced is for the hand-written loops of fashion_mnist_mlp and fashion_mnist_cnn" \
  -- "$dir/fashion_mnist_fit" --model mlp --traced
expect 2 "fashion_mnist_mlp: --epochs needs a whole number, not '5x'" -- "$dir/fashion_mnist_mlp" --epochs 5x
expect 2 "fashion_mnist_mlp: --epochs needs a value (N)" -- "$dir/fashion_mnist_mlp" --epochs
expect 2 "fashion_mnist_mlp: --traced takes no value (given 'yes')" -- "$dir/fashion_mnist_mlp" --traced=yes
expect 2 "fashion_mnist_mlp: unexpected argument 'runs.db' (flags are --name VALUE)" -- "$dir/fashion_mnist_mlp" runs.db
expect 2 "fashion_mnist_fit: --model is mlp, cnn or cnn_bn, not 'rnn'" -- "$dir/fashion_mnist_fit" --model=rnn
expect 2 "nan_hunt: --check-numerics is raise or record, not 'maybe'" -- "$dir/nan_hunt" --check-numerics=maybe
exit $fail
