#!/usr/bin/env bash
# `make demo`: train Fashion-MNIST while serving the live dashboard.
# Prints the dashboard address first, then trains the CNN with
# BatchNormalization through compile/fit (its train and test steps
# traced, as Keras' fit runs tf.functions) for about two minutes with the
# summary callback — loss and
# accuracy per batch and epoch, histograms, the train step's graph, its
# traces — then keeps serving until Ctrl-C. Falls back to the tutorial
# while the training example is absent.
set -euo pipefail
build="${1:-build}"
db="${GB_DEMO_DB:-$build/demo.db}"
if [ -x "$build/examples/fashion_mnist_fit" ]; then
  exec "$build/examples/fashion_mnist_fit" --model cnn_bn --epochs "${GB_DEMO_EPOCHS:-5}" \
    --db "$db" --run "cnn_bn-$(date +%Y%m%d-%H%M%S)" --serve 6006 --keep-serving
fi
exec "$build/examples/tutorial"
