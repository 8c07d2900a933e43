# Fuzz targets: every tests/fuzz/fuzz_<name>.c defines libFuzzer's
# LLVMFuzzerTestOneInput (and, if it needs one-time set-up,
# LLVMFuzzerInitialize). Each is built two ways:
#   - normal and sanitizer builds (gcc): linked with tests/fuzz/replay_main.c
#     and registered as the CTest test fuzz_replay_<name>, which feeds it
#     every file of tests/fuzz/corpus/<name>/ (the seeds) and
#     tests/fuzz/regressions/<name>/ (inputs that once failed), so a fixed
#     crash stays fixed without a fuzzer installed;
#   - GB_FUZZ=ON builds (clang, `make fuzz`): linked with libFuzzer, all
#     collected under the target `fuzzers`; scripts/fuzz.sh runs each for
#     FUZZ_SECONDS.
#
# Adding a target (a store opener, the HTTP parameter validator, a
# checkpoint or model-file reader, ...) needs no edit here:
#   1. tests/fuzz/fuzz_<name>.c: parse the input with the entry point under
#      test, between fuzz_begin() and fuzz_end() (tests/fuzz/fuzz_target.h),
#      and check what must hold: success gives a well-formed result, failure
#      a clear error. A failed check aborts, which the fuzzer reports.
#      The name picks the libraries as for tests: summary_* links the
#      store, webui_* the server, anything else the engine.
#   2. tests/fuzz/corpus/<name>/: a few small valid inputs (and some near
#      misses) to start from; keep them small, the fuzzer finds the rest.
#   3. Optional: tests/fuzz/fuzz_<name>.dict, a libFuzzer dictionary of
#      tokens the format uses (magic numbers, keywords).
#   4. When the fuzzer finds a crash: fix it, and copy the input it wrote
#      (build-fuzz/fuzz-crashes/<name>/crash-*) into
#      tests/fuzz/regressions/<name>/ under a name saying what it was.
# Files a target reads besides its input live in tests/fuzz/ (stores/: the
# base store of the store and server targets, written by make_fuzz_store);
# every target is compiled with GB_FUZZ_DIR, that folder's absolute path.
file(GLOB fuzz_srcs CONFIGURE_DEPENDS ${CMAKE_CURRENT_LIST_DIR}/fuzz/fuzz_*.c)
if(GB_FUZZ)
  add_custom_target(fuzzers)
endif()
foreach(src ${fuzz_srcs})
  get_filename_component(exe ${src} NAME_WE)
  string(REGEX REPLACE "^fuzz_" "" name ${exe})
  set(corpus ${CMAKE_CURRENT_LIST_DIR}/fuzz/corpus/${name})
  set(regressions ${CMAKE_CURRENT_LIST_DIR}/fuzz/regressions/${name})
  if(NOT IS_DIRECTORY ${corpus})
    message(FATAL_ERROR "${src}: its seed corpus ${corpus}/ is missing")
  endif()
  if(GB_FUZZ)
    add_executable(${exe} ${src})
    target_link_options(${exe} PRIVATE -fsanitize=fuzzer)
    add_dependencies(fuzzers ${exe})
  else()
    add_executable(${exe} ${src} ${CMAKE_CURRENT_LIST_DIR}/fuzz/replay_main.c)
    # Re-configure when an input is added, so a new regressions/ folder is seen.
    file(GLOB inputs CONFIGURE_DEPENDS ${corpus}/* ${regressions}/*)
    set(dirs ${corpus})
    if(IS_DIRECTORY ${regressions})
      list(APPEND dirs ${regressions})
    endif()
    add_test(NAME fuzz_replay_${name} COMMAND ${exe} ${dirs})
  endif()
  gb_libs_for(${name} libs)
  target_link_libraries(${exe} PRIVATE ${libs})
  target_include_directories(${exe} PRIVATE ${CMAKE_CURRENT_LIST_DIR}/fuzz)
  target_compile_definitions(${exe} PRIVATE GB_FUZZ_DIR="${CMAKE_CURRENT_LIST_DIR}/fuzz")
  set_target_properties(${exe} PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/fuzz)
endforeach()

# The program that writes tests/fuzz/stores/every_kind.sqlite (see its
# header): built with everything so it cannot rot, run by hand when the
# schema changes. It links the writer, which the targets must not.
if(TARGET glassbox_writer)
  add_executable(make_fuzz_store ${CMAKE_CURRENT_LIST_DIR}/fuzz/make_store.c)
  target_link_libraries(make_fuzz_store PRIVATE glassbox_writer)
  set_target_properties(make_fuzz_store PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/tests)
endif()

# The program that writes the model-file target's seeds
# (tests/fuzz/corpus/model_file/, see its header): built so it cannot rot,
# run by hand when the model-file format changes.
add_executable(make_fuzz_model_files ${CMAKE_CURRENT_LIST_DIR}/fuzz/make_model_files.c)
target_link_libraries(make_fuzz_model_files PRIVATE glassbox_framework)
set_target_properties(make_fuzz_model_files PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/tests)
