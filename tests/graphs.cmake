# The Graphs dashboard's end-to-end tests (beyond test_webui_traces.c):
#   webui_graphs_browser  examples/fashion_mnist_mlp --traced and
#                         examples/nan_hunt --traced write a store; chromium
#                         (playwright-core) opens the MLP's train step with
#                         its scopes closed, opens them, clicks an op, traces
#                         its inputs, colours by compute time, searches,
#                         switches before/after the passes, exports SVG, and
#                         follows the Numerics page's link to nan_hunt's
#                         alerted node; screenshots graphs-*.png
#   webui_graphs_scale    a generated graph of 10,000 nodes in 100 scopes:
#                         first paint, opening scopes and the longest main-
#                         thread task, against the budgets of issue #13;
#                         run alone so the timings mean something
if(TARGET glassbox_webui AND TARGET fashion_mnist_mlp AND TARGET nan_hunt)
  include(${CMAKE_CURRENT_LIST_DIR}/browser/node_test.cmake)
  gb_node_test(webui_graphs_browser ${CMAKE_CURRENT_LIST_DIR}/browser/graphs.test.mjs 240)
  gb_node_test(webui_graphs_scale ${CMAKE_CURRENT_LIST_DIR}/browser/graphs_scale.test.mjs 120)
  set_tests_properties(webui_graphs_scale PROPERTIES RUN_SERIAL TRUE)
  # browser_page (Makefile): their time is the examples' training and the
  # page's layout in chromium; under the sanitizers fmnist_mlp_quick_traced,
  # dist_fmnist_cnn and nan_hunt_raise run the examples' traced steps,
  # test_webui_traces and test_webui_list_cost the graph API, on
  # webui_fixtures' 10,000-op graph too.
  set_property(TEST webui_graphs_browser webui_graphs_scale APPEND PROPERTY LABELS browser_page)
endif()
