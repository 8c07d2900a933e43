# The Profile dashboard's end-to-end test (beyond test_webui_profile.c):
#   webui_profile_browser  examples/profile_input_bound writes a run behind a
#                          slow map and one fed in parallel; chromium checks
#                          the Overview's verdicts, the Ops table, the trace
#                          viewer (wheel, W/S/A/D, drag, a click) and the
#                          Memory view; screenshots go to
#                          <build>/tests/artifacts/profile*.png
#   profile_chrome_trace   glassbox export --profile of that store, loaded by
#                          a JSON parser and every event checked against the
#                          trace-event format (ph, ts, dur, pid, tid)
if(TARGET glassbox_webui AND TARGET profile_input_bound)
  include(${CMAKE_CURRENT_LIST_DIR}/browser/node_test.cmake)
  gb_node_test(webui_profile_browser ${CMAKE_CURRENT_LIST_DIR}/browser/profile.test.mjs 240)
  # browser_page (Makefile): under the sanitizers profile_chrome_trace and
  # readme_profiling_where_each_step_s_time_goes run profile_input_bound,
  # test_webui_profile the profile API.
  set_property(TEST webui_profile_browser APPEND PROPERTY LABELS browser_page)
  gb_node_test(profile_chrome_trace ${CMAKE_CURRENT_LIST_DIR}/profile/chrome_trace.test.mjs 120)
endif()
