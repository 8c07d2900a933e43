# Call sites (gb_base.h): every public function that can fail records its
# caller's file:line through a GB_AT macro.
#   call_sites               the public headers follow the rule in
#                            call_sites/check.pl (naming each function
#                            that breaks it)
#   call_sites_detects_*     the checker catches a forgotten macro, for a
#                            function that returns a pointer and for a void
#                            one that records an error through a helper, so
#                            the first test cannot pass by checking nothing
# tests/test_call_sites.c checks the recorded file:line themselves.
find_program(PERL_EXECUTABLE perl REQUIRED)
set(gb_call_sites ${CMAKE_CURRENT_LIST_DIR}/call_sites/check.pl)
add_test(NAME call_sites COMMAND ${PERL_EXECUTABLE} ${gb_call_sites} ${CMAKE_SOURCE_DIR})
add_test(NAME call_sites_detects_pointer
         COMMAND ${PERL_EXECUTABLE} ${gb_call_sites} ${CMAKE_SOURCE_DIR}
                 --header "gb_tensor *gb_forgotten(gb_tensor *x);")
set_tests_properties(call_sites_detects_pointer PROPERTIES PASS_REGULAR_EXPRESSION
  "gb_forgotten \\(injected header\\): returns a pointer but has no call-site macro")
add_test(NAME call_sites_detects_void
         COMMAND ${PERL_EXECUTABLE} ${gb_call_sites} ${CMAKE_SOURCE_DIR}
                 --header "void gb_forgotten(int x);"
                 --source "void gb_forgotten(int x) { check(x); }"
                 --source "static void check(int x) { if (x < 0) gb__error(GB_ERR_VALUE, 0, \"x\"); }")
set_tests_properties(call_sites_detects_void PROPERTIES PASS_REGULAR_EXPRESSION
  "gb_forgotten \\(injected header\\): can record an error \\(gb_forgotten -> check -> gb__error\\) but has no call-site macro")
