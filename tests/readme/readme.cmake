# readme.cmake — README.md as tests (doc tests, tests/readme/doctest.mjs).
#
# At configure time doctest.mjs writes each C block of the README as a
# program (a fragment inside its context, tests/readme/context/) and a
# list of sections; here each program is built — a block that does not
# compile fails the build — and each section with code becomes a test,
# readme_<section>, which runs its C programs and shell commands. Without
# node the sections cannot be read: one failing test says so.
include(${CMAKE_SOURCE_DIR}/tests/browser/node_test.cmake)
set(GB_README ${CMAKE_SOURCE_DIR}/README.md)
set(GB_README_DIR ${CMAKE_BINARY_DIR}/generated/readme)
set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${GB_README}
             ${CMAKE_SOURCE_DIR}/tests/readme/doctest.mjs)
file(GLOB gb_readme_contexts CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/tests/readme/context/*.c)
set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${gb_readme_contexts})

function(gb_readme_program name src)
  add_executable(${name} ${src})
  target_link_libraries(${name} PRIVATE ${GB_ALL_LIBS})
  # README code is a user's: its callbacks take parameters they ignore.
  target_compile_options(${name} PRIVATE -Wno-unused-parameter)
  set_target_properties(${name} PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/readme)
endfunction()

# The sections whose commands train full-size models (several epochs of
# Fashion-MNIST, under mpirun or to save a SavedModel): label full_size,
# which the sanitizer run leaves out (Makefile); the dist_* and saved_model_*
# tests run the same code there on smaller runs.
set(GB_README_FULL_SIZE training_on_several_processes savedmodel_a_model_that_runs_without_its_code)

function(gb_readme_section slug title)
  add_test(NAME readme_${slug} COMMAND ${NODE_EXECUTABLE} ${CMAKE_SOURCE_DIR}/tests/readme/doctest.mjs
           run ${GB_README} ${slug})
  set(labels readme)
  if(slug IN_LIST GB_README_FULL_SIZE)
    list(APPEND labels full_size)
  endif()
  set_tests_properties(readme_${slug} PROPERTIES TIMEOUT 900 LABELS "${labels}" ENVIRONMENT
    "GB_SOURCE_DIR=${CMAKE_SOURCE_DIR};GB_BUILD_DIR=${CMAKE_BINARY_DIR}")
endfunction()

if(NODE_EXECUTABLE)
  execute_process(COMMAND ${NODE_EXECUTABLE} ${CMAKE_SOURCE_DIR}/tests/readme/doctest.mjs extract
                          ${GB_README} ${GB_README_DIR}
                  RESULT_VARIABLE gb_readme_rc ERROR_VARIABLE gb_readme_err)
  if(NOT gb_readme_rc EQUAL 0)
    message(FATAL_ERROR "README.md's doc tests cannot be made:\n${gb_readme_err}")
  endif()
  include(${GB_README_DIR}/readme.cmake)
  # The tape example prints its loss after one step: (0.5 - 2 - 3)^2.
  add_test(NAME readme_example COMMAND ${CMAKE_BINARY_DIR}/readme/readme_eager_code_with_a_tape_1)
  set_tests_properties(readme_example PROPERTIES PASS_REGULAR_EXPRESSION "loss 20\\.250")
else()
  add_test(NAME readme_doc_tests COMMAND ${CMAKE_COMMAND}
           "-DMESSAGE=README doc tests: node not found — run scripts/bootstrap.sh"
           -P ${CMAKE_SOURCE_DIR}/tests/browser/fail.cmake)
endif()
