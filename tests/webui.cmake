# The dashboard's tests beyond its Check unit tests (test_webui_*.c):
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
  add_executable(webui_load ${CMAKE_CURRENT_LIST_DIR}/webui_load.c)
  target_include_directories(webui_load PRIVATE ${CMAKE_CURRENT_LIST_DIR})
  target_link_libraries(webui_load PRIVATE glassbox_webui)
  set_target_properties(webui_load PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/tests)
  add_test(NAME webui_load COMMAND webui_load 10 50)
  # Alone on the machine, so the figures it prints mean something.
  set_tests_properties(webui_load PROPERTIES TIMEOUT 90 RUN_SERIAL TRUE)

  # Small writers the browser tests add data to a store with (before the
  # page opens, or while it is open to check live updates).
  foreach(helper append_scalar append_histogram)
    add_executable(${helper} ${CMAKE_CURRENT_LIST_DIR}/browser/${helper}.c)
    target_link_libraries(${helper} PRIVATE glassbox_summary)
    set_target_properties(${helper} PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/tests)
  endforeach()

  # Registered even without node (then they fail and say so).
  include(${CMAKE_CURRENT_LIST_DIR}/browser/node_test.cmake)
  gb_node_test(webui_browser ${CMAKE_CURRENT_LIST_DIR}/browser/dashboard.test.mjs 180)
  gb_node_test(webui_smoothing ${CMAKE_CURRENT_LIST_DIR}/browser/smoothing.test.mjs 30)
endif()
