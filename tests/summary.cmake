# summary.cmake — build order for the event store's tests.
#
# test_summary_cli runs the `glassbox` program and test_summary_* read
# stores written by the summary library; CTest does not build, so make
# building the CLI test build the program it runs.
if(TARGET test_summary_cli AND TARGET glassbox)
  add_dependencies(test_summary_cli glassbox)
endif()
