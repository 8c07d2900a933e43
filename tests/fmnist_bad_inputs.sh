#!/usr/bin/env bash
# Bad data for the Fashion-MNIST example: each case must fail with a
# non-zero exit and a message that says what is wrong. Each run is
# bounded by `timeout`, so a hang fails the case instead of the suite.
set -u
prog="$1"
real=/usr/share/datasets/fashion-mnist
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
passed=0 failed=0

expect_failure() { # name, expected message part, args...
  local name="$1" want="$2"; shift 2
  local out code
  out=$(timeout 120 "$prog" --epochs 1 "$@" 2>&1); code=$?
  if [ "$code" -ne 0 ] && grep -qF -- "$want" <<<"$out"; then
    passed=$((passed + 1))
  else
    failed=$((failed + 1))
    echo "FAIL $name: exit $code, wanted a message containing '$want', got:"; echo "$out"
  fi
}

expect_failure missing_dir "$tmp/nope" --data "$tmp/nope"

mkdir "$tmp/truncated"
cp "$real"/*.gz "$tmp/truncated/"
zcat "$real/t10k-images-idx3-ubyte.gz" | head -c 100000 | gzip > "$tmp/truncated/t10k-images-idx3-ubyte.gz"
expect_failure truncated_idx "truncated" --data "$tmp/truncated"

mkdir "$tmp/mismatch"
cp "$real"/*.gz "$tmp/mismatch/"
# A label file for 9,999 images: the header says 9999, the data has 9999 bytes.
zcat "$real/t10k-labels-idx1-ubyte.gz" | python3 -c '
import sys
d = sys.stdin.buffer.read()
sys.stdout.buffer.write(d[:4] + (9999).to_bytes(4, "big") + d[8:8 + 9999])' \
  | gzip > "$tmp/mismatch/t10k-labels-idx1-ubyte.gz"
expect_failure label_count "9999" --data "$tmp/mismatch"

mkdir "$tmp/bad_label"
cp "$real"/*.gz "$tmp/bad_label/"
# Test label 1 (among the three the example names in its sample text) is
# 200: a class that does not exist must be refused by the loader, naming
# the file, the record and the value, not used as an index.
zcat "$real/t10k-labels-idx1-ubyte.gz" | python3 -c '
import sys
d = bytearray(sys.stdin.buffer.read())
d[8 + 1] = 200
sys.stdout.buffer.write(d)' \
  | gzip > "$tmp/bad_label/t10k-labels-idx1-ubyte.gz"
expect_failure label_out_of_range "t10k-labels-idx1-ubyte.gz: label 200 at record 1" \
  --data "$tmp/bad_label" --limit 1000

mkdir "$tmp/fifo"
cp "$real"/*.gz "$tmp/fifo/"
rm "$tmp/fifo/train-labels-idx1-ubyte.gz"
mkfifo "$tmp/fifo/train-labels-idx1-ubyte.gz"
# A FIFO in place of a file: refused at once (a blocking open would wait
# for a writer forever).
expect_failure fifo "train-labels-idx1-ubyte.gz: is a FIFO" --data "$tmp/fifo"

expect_failure bad_flag "unknown flag" --bogus 1

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
