#!/usr/bin/env bash
# char_lm.sh — examples/char_lm as a person runs it.
#
#   char_lm.sh generate BUILD   a short training saves its SavedModel; then
#       `glassbox saved-model run` (no model code) must write, for the
#       prompt "The ", exactly the sample the program printed after its
#       epoch: serving_default is generate at temperature 0.8 and 300
#       characters, as the per-epoch sample, and a traced random op's first
#       draw is the same in both (later calls draw anew); `saved-model
#       show` lists both signatures.
#   char_lm.sh pytorch BUILD SOURCE   3 short epochs of the full model, and
#       the same model, split, windows, schedule and step count in PyTorch
#       (bench/char_lm_peer.py): the validation losses (nats per character)
#       must agree within 2 %.
set -euo pipefail
mode="$1" build="$2"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
case "$mode" in
generate)
  "$build/examples/char_lm" --epochs 1 --steps 3 --batch 4 --layers 1 --val-windows 4 --verbose 2 \
    --saved-model "$work/model" > "$work/train.txt"
  # The epoch's sample: from "epoch 1 sample: " to the progress line.
  awk '/^epoch 1 sample: /{on=1; sub(/^epoch 1 sample: /, "")} /^3\/3 - /{on=0} on' "$work/train.txt" > "$work/want.txt"
  printf 'The \n' > "$work/prompt.txt"
  "$build/glassbox" saved-model run --dir "$work/model" --input "prompt=$work/prompt.txt" \
    --output-dir "$work/out" > "$work/run.txt"
  grep -qF "output 'text': string[1]" "$work/run.txt" || { cat "$work/run.txt"; exit 1; }
  if ! cmp -s "$work/want.txt" "$work/out/text.txt"; then
    echo "saved-model run wrote:"; cat "$work/out/text.txt"
    echo "the program printed:"; cat "$work/want.txt"
    exit 1
  fi
  [ "$(wc -c < "$work/want.txt")" -eq 305 ] || { echo "sample of $(wc -c < "$work/want.txt") bytes, want 4 + 300 + newline"; exit 1; }
  "$build/glassbox" saved-model show --dir "$work/model" > "$work/show.txt"
  grep -q "signature 'generate'" "$work/show.txt" && grep -q "signature 'serving_default'" "$work/show.txt" ||
    { cat "$work/show.txt"; exit 1; }
  # The generate signature with its inputs written out (--input-exprs):
  # at 0.8 and 300 characters it is serving_default, so the same sample;
  # a value that is not of its input's dtype is refused by name.
  "$build/glassbox" saved-model run --dir "$work/model" --signature generate \
    --input-exprs "prompt=The ;temperature=0.8;length=300" --output-dir "$work/out2" > /dev/null
  cmp -s "$work/want.txt" "$work/out2/text.txt" || { echo "generate wrote:"; cat "$work/out2/text.txt"; exit 1; }
  refused() { # expected message, then the arguments
    local want="$1"; shift
    if got=$("$build/glassbox" saved-model run --dir "$work/model" --signature generate "$@" 2>&1); then
      echo "accepted: $*"; exit 1
    fi
    [[ "$got" == *"$want"* ]] || { echo "for $*: $got"; exit 1; }
  }
  refused "input 'temperature' takes float32: 'warm' is not a number" --input-exprs "prompt=The ;temperature=warm;length=9"
  refused "input 'length' takes int32: '2.5' is not an integer" --input-exprs "prompt=The ;temperature=1;length=2.5"
  refused "input 'length' is missing from --input and --input-exprs" --input-exprs "prompt=The ;temperature=1"
  refused "input 'prompt' is given twice" --input "prompt=$work/prompt.txt" --input-exprs "prompt=x;temperature=1;length=3"
  echo "saved-model run reproduces the program's sample: $(head -c 60 "$work/want.txt" | tr '\n' ' ')..."
  ;;
pytorch)
  source="$3"
  args=(--epochs 3 --steps 30 --batch 16 --val-windows 128)
  ours=$("$build/examples/char_lm" "${args[@]}" --verbose 0 | sed -n 's/^final val_loss \([0-9.]*\) .*/\1/p')
  theirs=$(env MALLOC_MMAP_THRESHOLD_=33554432 MALLOC_TOP_PAD_=268435456 MALLOC_TRIM_THRESHOLD_=17179869184 \
    /usr/bin/python3 "$source/bench/char_lm_peer.py" --train "${args[@]}" 2>/dev/null | sed -n 's/^val_loss //p')
  echo "validation loss after 3 epochs of 30 steps (batch 16): glassbox $ours, PyTorch $theirs nats/char"
  awk -v a="$ours" -v b="$theirs" 'BEGIN { d = (a - b) / b; if (d < 0) d = -d;
    printf "relative difference %.4f\n", d; exit !(a > 0 && b > 0 && d <= 0.02) }'
  ;;
*) echo "usage: char_lm.sh generate|pytorch BUILD [SOURCE]"; exit 2 ;;
esac
