# The usage example at the top of framework/gb_nn.h is extracted, compiled
# and run (it exits non-zero unless its loss falls tenfold), so the
# documentation cannot rot.
file(READ ${CMAKE_SOURCE_DIR}/framework/gb_nn.h gb_nn_header)
string(REGEX MATCH "BEGIN NN EXAMPLE\n(.*)\n \\* END NN EXAMPLE" _ "${gb_nn_header}")
string(REGEX REPLACE "(^|\n) \\* ?" "\\1" gb_nn_example "${CMAKE_MATCH_1}")
file(WRITE ${CMAKE_BINARY_DIR}/generated/nn_example.c
     "/* Generated from the usage example in framework/gb_nn.h. */\n${gb_nn_example}\n")
set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/framework/gb_nn.h)
add_executable(nn_example ${CMAKE_BINARY_DIR}/generated/nn_example.c)
target_link_libraries(nn_example PRIVATE ${GB_ALL_LIBS})
set_target_properties(nn_example PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/examples)
add_test(NAME nn_example COMMAND ${CMAKE_BINARY_DIR}/examples/nn_example)
