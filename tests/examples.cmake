# Tests that run the example programs as a person would.
#
# fmnist_mlp_quick: one epoch of the MLP on 20,000 training images must
# reach 80 % test accuracy (the full run reaches 87.5 % in 5 epochs).
# fmnist_bad_inputs: a missing data directory, a truncated IDX file, a
# label file whose count differs, a test label outside the 10 classes and a
# FIFO in place of a file each give a clear message and a non-zero exit.
add_test(NAME fmnist_mlp_quick
         COMMAND ${CMAKE_BINARY_DIR}/examples/fashion_mnist_mlp --epochs 1 --limit 20000
                 --min-accuracy 0.80)
set_tests_properties(fmnist_mlp_quick PROPERTIES TIMEOUT 600)
add_test(NAME fmnist_bad_inputs
         COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/fmnist_bad_inputs.sh
                 ${CMAKE_BINARY_DIR}/examples/fashion_mnist_mlp)

# nan_hunt: without checks the loss turns NaN; with --check-numerics the run
# stops at the op that made the first -Inf and names it.
add_test(NAME nan_hunt_unchecked COMMAND ${CMAKE_BINARY_DIR}/examples/nan_hunt)
set_tests_properties(nan_hunt_unchecked PROPERTIES
  PASS_REGULAR_EXPRESSION "the loss became NaN at step [0-9]+")
add_test(NAME nan_hunt_raise COMMAND ${CMAKE_BINARY_DIR}/examples/nan_hunt --check-numerics)
set_tests_properties(nan_hunt_raise PROPERTIES WILL_FAIL FALSE
  PASS_REGULAR_EXPRESSION "of op 'naive_cross_entropy/Log' \\(type Log\\).*The op created them")

# demo_browser: the MLP example serving its own dashboard while it trains,
# checked (and screenshotted) in chromium, as `make demo` shows it.
include(${CMAKE_CURRENT_LIST_DIR}/browser/node_test.cmake)
gb_node_test(demo_browser ${CMAKE_CURRENT_LIST_DIR}/browser/demo.test.mjs 240)
