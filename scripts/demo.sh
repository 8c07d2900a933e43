#!/usr/bin/env bash
# `make demo`: train Fashion-MNIST while serving the live dashboard.
# Prints the dashboard address first, trains (the train step traced into
# one graph, as tf.function does), then keeps serving until Ctrl-C. Falls
# back to the tutorial while the training example is absent.
set -euo pipefail
build="${1:-build}"
db="${GB_DEMO_DB:-$build/demo.db}"
if [ -x "$build/examples/fashion_mnist_mlp" ]; then
  exec "$build/examples/fashion_mnist_mlp" --epochs "${GB_DEMO_EPOCHS:-5}" \
    --db "$db" --run "mlp-$(date +%Y%m%d-%H%M%S)" --serve 6006 --keep-serving \
    --traced
fi
exec "$build/examples/tutorial"
