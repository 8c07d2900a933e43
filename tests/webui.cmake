# The dashboard's tests beyond its Check unit tests (test_webui_*.c):
#   webui_load     50 concurrent clients for 10 s while a writer writes
#                  (loopback, bounded; reports requests/s and p99)
#   webui_smoothing the scalar smoothing (debiased EMA) by hand, in node
#   webui_browser  end-to-end: Debian's chromium driven by playwright-core
#                  (static/node_modules) on a store written by
#                  examples/summary_showcase; screenshots go to
#                  <build>/tests/artifacts/
if(TARGET glassbox_webui)
  add_executable(webui_load ${CMAKE_CURRENT_LIST_DIR}/webui_load.c)
  target_include_directories(webui_load PRIVATE ${CMAKE_CURRENT_LIST_DIR})
  target_link_libraries(webui_load PRIVATE glassbox_webui)
  set_target_properties(webui_load PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/tests)
  add_test(NAME webui_load COMMAND webui_load 10 50)
  # Alone on the machine, so the figures it prints mean something.
  set_tests_properties(webui_load PROPERTIES TIMEOUT 90 RUN_SERIAL TRUE)

  add_executable(append_scalar ${CMAKE_CURRENT_LIST_DIR}/browser/append_scalar.c)
  target_link_libraries(append_scalar PRIVATE glassbox_summary)
  set_target_properties(append_scalar PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/tests)

  find_program(NODE_EXECUTABLE node)
  if(NODE_EXECUTABLE)
    add_test(NAME webui_browser
             COMMAND ${NODE_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/browser/dashboard.test.mjs
             WORKING_DIRECTORY ${CMAKE_BINARY_DIR}/tests)
    set_tests_properties(webui_browser PROPERTIES TIMEOUT 180 ENVIRONMENT
      "GB_SOURCE_DIR=${CMAKE_SOURCE_DIR};GB_BUILD_DIR=${CMAKE_BINARY_DIR}")
    add_test(NAME webui_smoothing
             COMMAND ${NODE_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/browser/smoothing.test.mjs)
    set_tests_properties(webui_smoothing PROPERTIES TIMEOUT 30 ENVIRONMENT
      "GB_SOURCE_DIR=${CMAKE_SOURCE_DIR};GB_BUILD_DIR=${CMAKE_BINARY_DIR}")
  endif()
endif()
