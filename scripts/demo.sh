#!/usr/bin/env bash
# `make demo`: train Fashion-MNIST while serving the live dashboard.
# Prints the dashboard address first, then trains the CNN with
# BatchNormalization through compile/fit (its train and test steps
# traced, as Keras' fit runs tf.functions) for about two minutes with the
# summary callback — loss and
# accuracy per batch and epoch, histograms, the train step's graph, its
# traces — then keeps serving until Ctrl-C. Falls back to the tutorial
# while the training example is absent.
#
# MODEL=char_lm (`make demo MODEL=char_lm`) trains the character-level
# transformer on Debian's fortunes instead: losses and perplexity, the
# gradients' norm, attention images and, every epoch, 300 characters it
# writes (the Text page), then its SavedModel in $build/char_lm_model.
set -euo pipefail
build="${1:-build}"
db="${GB_DEMO_DB:-$build/demo.db}"
if [ "${MODEL:-}" = char_lm ]; then
  exec "$build/examples/char_lm" --epochs "${GB_DEMO_EPOCHS:-5}" --db "$db" \
    --run "char_lm-$(date +%Y%m%d-%H%M%S)" --serve 6006 --keep-serving \
    --saved-model "$build/char_lm_model"
fi
if [ -x "$build/examples/fashion_mnist_fit" ]; then
  exec "$build/examples/fashion_mnist_fit" --model cnn_bn --epochs "${GB_DEMO_EPOCHS:-5}" \
    --db "$db" --run "cnn_bn-$(date +%Y%m%d-%H%M%S)" --serve 6006 --keep-serving
fi
exec "$build/examples/tutorial"
