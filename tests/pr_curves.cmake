# Precision-recall counts against scikit-learn (or NumPy without it):
#   pr_curves_sklearn  tests/pr_curves/sklearn_check.py writes a curve of
#                      5000 predictions through pr_curve_dump (the writer,
#                      then the reader) and compares every threshold's
#                      counts, precision and recall exactly.
# Debian's python3 (its python3-sklearn, python3-numpy), not one a PATH puts first.
find_program(GB_DEBIAN_PYTHON3 python3 PATHS /usr/bin NO_DEFAULT_PATH)
if(GB_DEBIAN_PYTHON3)
  add_executable(pr_curve_dump ${CMAKE_CURRENT_LIST_DIR}/pr_curves/dump.c)
  target_link_libraries(pr_curve_dump PRIVATE glassbox_writer)
  set_target_properties(pr_curve_dump PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/tests)
  add_test(NAME pr_curves_sklearn
           COMMAND ${GB_DEBIAN_PYTHON3} ${CMAKE_CURRENT_LIST_DIR}/pr_curves/sklearn_check.py
                   $<TARGET_FILE:pr_curve_dump> ${CMAKE_BINARY_DIR}/tests/pr_curves_work)
endif()
