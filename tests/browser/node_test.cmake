# node_test.cmake — gb_node_test(NAME SCRIPT TIMEOUT): registers a test
# that node runs (tests/browser/*.mjs), or, when node is missing, a test of
# the same name that fails and says so. A missing tool must never make a
# test vanish: a green run without the browser tests would pass for a
# dashboard that works. Chromium and playwright-core are checked by the
# tests themselves (tests/browser/lib.mjs), which fail with the same advice.
include_guard(GLOBAL)
find_program(NODE_EXECUTABLE node)
set(GB_NODE_TEST_DIR ${CMAKE_CURRENT_LIST_DIR})

function(gb_node_test name script timeout)
  if(NODE_EXECUTABLE)
    add_test(NAME ${name} COMMAND ${NODE_EXECUTABLE} ${script}
             WORKING_DIRECTORY ${CMAKE_BINARY_DIR}/tests)
  else()
    add_test(NAME ${name} COMMAND ${CMAKE_COMMAND}
             "-DMESSAGE=${name}: node not found — run scripts/bootstrap.sh"
             -P ${GB_NODE_TEST_DIR}/fail.cmake)
  endif()
  set_tests_properties(${name} PROPERTIES TIMEOUT ${timeout} ENVIRONMENT
    "GB_SOURCE_DIR=${CMAKE_SOURCE_DIR};GB_BUILD_DIR=${CMAKE_BINARY_DIR}")
endfunction()
