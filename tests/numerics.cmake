# The Numerics dashboard's end-to-end test (beyond test_webui_numerics.c):
#   webui_numerics_browser  examples/nan_hunt --check-numerics=record writes
#                           a store; Debian's chromium (playwright-core from
#                           static/node_modules) checks the Numerics page
#                           names naive_cross_entropy/Log as the first NaN/Inf,
#                           its table, filters and live updates, and the links
#                           from the scalars page; screenshots go to
#                           <build>/tests/artifacts/numerics*.png
if(TARGET glassbox_webui AND TARGET nan_hunt)
  # append_alert (tests/browser/append_alert.c) is built in webui.cmake.
  include(${CMAKE_CURRENT_LIST_DIR}/browser/node_test.cmake)
  gb_node_test(webui_numerics_browser ${CMAKE_CURRENT_LIST_DIR}/browser/numerics.test.mjs 180)
endif()
