# The dependency rule (ARCHITECTURE.md), checked on every include line:
#   layering          the source tree follows it
#   layering_symbols  no engine object file uses a symbol defined in a
#                     higher layer (calls, not only includes)
#   layering_detects  the checker catches a forbidden include (core/ reaching
#                     ops/, framework reaching the store, the server reaching
#                     the engine), so the first test cannot pass by checking
#                     nothing
add_test(NAME layering COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/layering/check.sh ${CMAKE_SOURCE_DIR})
add_test(NAME layering_symbols
         COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/layering/symbols.sh
                 ${CMAKE_BINARY_DIR}/CMakeFiles/glassbox_framework.dir/framework)
foreach(bad "framework/core/dtype.c:ops/internal.h"
            "framework/ops/dispatch.c:autodiff/internal.h"
            "framework/nn/dense.c:gb_reader.h"
            "framework/core/scope.c:sqlite3.h"
            "webui/routes.c:glassbox.h")
  string(REGEX REPLACE "[^a-z]+" "_" tag "${bad}")
  add_test(NAME layering_detects_${tag}
           COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/layering/check.sh ${CMAKE_SOURCE_DIR} ${bad})
  # Passes only when the injected line itself is reported.
  string(REGEX REPLACE ":.*" "" file "${bad}")
  set_tests_properties(layering_detects_${tag} PROPERTIES
                       PASS_REGULAR_EXPRESSION "${file}:injected includes")
endforeach()
