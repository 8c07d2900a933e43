# The dashboard's test programs, and its tests beyond the Check unit tests
# (test_webui_*.c):
#   webui_load     50 concurrent clients for 10 s while a writer writes
#                  (loopback, bounded; reports requests/s and p99)
#   webui_smoothing the scalar smoothing (debiased EMA) by hand, in node
#   webui_browser  end-to-end: Debian's chromium driven by playwright-core
#                  (static/node_modules) on a store written by
#                  examples/summary_showcase; screenshots go to
#                  <build>/tests/artifacts/
# Without node, chromium or playwright-core these tests still run and fail
# with a message saying what is missing (never silently skipped).
if(TARGET glassbox_webui)
  # Programs that write stores, linking the writer so the Check tests
  # (test_webui_*: the server and the store only) need not:
  #   webui_fixtures  the stores test_webui_api, _numerics and _cli read
  #   append_scalar   scalars written while a page or a test watches
  #   append_alert    a numerics alert written while a page or a test watches
  #   append_histogram histogram tags, so some cards start below the fold
  #   append_traces   a function capturing 40 variables, relaxed by reduce_retracing
  #   append_text     a text summary (markdown, hostile markdown)
  #   write_sweep     a synthetic hparam sweep (the HParams page's test and bench)
  #   write_embedding a synthetic embedding of N x D in K clusters (the Projector's bench)
  #   write_logdir    a logdir of many stores at scale (the logdir bench)
  #   write_health    two runs' training health through the default writer (the Health page's test)
  #   append_tfevents scalar records appended to a TensorBoard event file
  set(gb_store_writers webui_fixtures=webui_fixtures.c append_scalar=browser/append_scalar.c
                       append_alert=browser/append_alert.c
                       append_histogram=browser/append_histogram.c
                       append_traces=browser/append_traces.c
                       append_text=browser/append_text.c
                       write_sweep=browser/write_sweep.c
                       write_embedding=browser/write_embedding.c
                       write_logdir=browser/write_logdir.c
                       write_health=browser/write_health.c
                       append_tfevents=browser/append_tfevents.c)
  foreach(pair ${gb_store_writers})
    string(REGEX REPLACE "=.*" "" prog ${pair})
    string(REGEX REPLACE "^[^=]*=" "" src ${pair})
    add_executable(${prog} ${CMAKE_CURRENT_LIST_DIR}/${src})
    if(prog STREQUAL webui_fixtures)
      target_sources(${prog} PRIVATE ${CMAKE_CURRENT_LIST_DIR}/graph_shapes.c)
    endif()
    target_link_libraries(${prog} PRIVATE glassbox_writer)
    set_target_properties(${prog} PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/tests)
  endforeach()
  # CTest does not build: building a webui test builds what it runs.
  file(GLOB webui_tests CONFIGURE_DEPENDS ${CMAKE_CURRENT_LIST_DIR}/test_webui_*.c)
  foreach(src ${webui_tests})
    get_filename_component(t ${src} NAME_WE)
    add_dependencies(${t} webui_fixtures append_scalar append_alert glassbox)
  endforeach()

  # The load test writes from a thread of its own, beside the server.
  add_executable(webui_load ${CMAKE_CURRENT_LIST_DIR}/webui_load.c)
  target_include_directories(webui_load PRIVATE ${CMAKE_CURRENT_LIST_DIR})
  target_link_libraries(webui_load PRIVATE glassbox_webui glassbox_writer)
  set_target_properties(webui_load PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/tests)
  add_test(NAME webui_load COMMAND webui_load 10 50)
  # Alone on the machine, so the figures it prints mean something.
  set_tests_properties(webui_load PROPERTIES TIMEOUT 90 RUN_SERIAL TRUE)

  # Registered even without node (then they fail and say so).
  include(${CMAKE_CURRENT_LIST_DIR}/browser/node_test.cmake)
  gb_node_test(webui_browser ${CMAKE_CURRENT_LIST_DIR}/browser/dashboard.test.mjs 180)
  gb_node_test(webui_smoothing ${CMAKE_CURRENT_LIST_DIR}/browser/smoothing.test.mjs 30)
  # The pages' counts and nouns ("1 thread", "3 threads"), in node.
  gb_node_test(webui_counted ${CMAKE_CURRENT_LIST_DIR}/browser/counted_check.mjs 30)
  # The Scalars page with 10,000 tags: windowed cards, scrolled by the wheel.
  gb_node_test(webui_scalars_window ${CMAKE_CURRENT_LIST_DIR}/browser/scalars_window.test.mjs 240)
  # browser_page (Makefile): its checks are the page's windowing; under the
  # sanitizers test_summary_logdir and test_webui_list_cost run the logdir
  # and the tag list at scale, dist_logdir_browser a logdir behind a page.
  set_property(TEST webui_scalars_window APPEND PROPERTY LABELS browser_page)
  gb_node_test(webui_traces_browser ${CMAKE_CURRENT_LIST_DIR}/browser/traces.test.mjs 120)
  # The Health page (tests/browser/health.test.mjs) on write_health's two runs;
  # screenshots <build>/tests/artifacts/health_*.png.
  gb_node_test(webui_health_browser ${CMAKE_CURRENT_LIST_DIR}/browser/health.test.mjs 120)
  gb_node_test(webui_auth_browser ${CMAKE_CURRENT_LIST_DIR}/browser/auth.test.mjs 120)
  # A newcomer's first run: serve a store not made yet, train into it for
  # one epoch, and every dashboard right on it (first_run.test.mjs).
  gb_node_test(webui_first_run ${CMAKE_CURRENT_LIST_DIR}/browser/first_run.test.mjs 300)
  # browser_page (Makefile): under the sanitizers test_webui_cli serves a
  # store not made yet; readme_keras_training_compile_fit_callbacks runs
  # fit recording into a store, saved_model_train and dist_fmnist_cnn the
  # convolutions, webui_numerics_browser nan_hunt's recorded NaNs behind a
  # live page, webui_browser every dashboard's server side behind one.
  set_property(TEST webui_first_run APPEND PROPERTY LABELS browser_page)
endif()
