# Link-level layering tests: the store and the program that serves it never
# reach the engine (DESIGN: webui -> summary/store only; the linker enforces).
#   link_store_self_contained  every gb_* symbol libglassbox_store.a needs
#                                is defined inside it (nm): no engine, no writer
#   link_glassbox_no_engine    the `glassbox` program holds no symbol of the
#                                engine library (nm) and loads no BLAS (ldd)
# Included by tests/CMakeLists.txt, this file registers the tests; run as
# `cmake -P` by them, it is the check (below), needing only nm and ldd.
if(NOT CMAKE_SCRIPT_MODE_FILE)
  if(TARGET glassbox_store AND TARGET glassbox AND TARGET glassbox_framework)
    add_test(NAME link_store_self_contained
             COMMAND ${CMAKE_COMMAND} -DMODE=self_contained -DNM=${CMAKE_NM}
                     -DLIB=$<TARGET_FILE:glassbox_store>
                     -P ${CMAKE_CURRENT_LIST_FILE})
    add_test(NAME link_glassbox_no_engine
             COMMAND ${CMAKE_COMMAND} -DMODE=no_engine -DNM=${CMAKE_NM}
                     -DENGINE=$<TARGET_FILE:glassbox_framework> -DPROGRAM=$<TARGET_FILE:glassbox>
                     -P ${CMAKE_CURRENT_LIST_FILE})
  endif()
  return()
endif()

# ---- the checks (script mode) ------------------------------------------------------
#   MODE=self_contained LIB=<lib.a>: every undefined gb_* symbol of LIB is
#     defined by LIB itself.
#   MODE=no_engine ENGINE=<engine.a> PROGRAM=<exe>: PROGRAM defines no gb_*
#     symbol that ENGINE defines, and ldd lists no BLAS library for it.

# The gb_* symbols of `file` that nm lists with `flags`.
function(gb_symbols file flags out)
  execute_process(COMMAND ${NM} ${flags} ${file} OUTPUT_VARIABLE text
                  ERROR_QUIET RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "nm ${flags} ${file} failed")
  endif()
  string(REGEX MATCHALL "[A-Za-z] gb_[A-Za-z0-9_]+" lines "${text}")
  set(names "")
  foreach(line ${lines})
    string(REGEX REPLACE "^[A-Za-z] " "" name "${line}")
    list(APPEND names ${name})
  endforeach()
  list(REMOVE_DUPLICATES names)
  set(${out} "${names}" PARENT_SCOPE)
endfunction()

if(MODE STREQUAL "self_contained")
  gb_symbols(${LIB} "--undefined-only" needed)
  gb_symbols(${LIB} "--defined-only" defined)
  list(REMOVE_ITEM needed ${defined})
  if(needed)
    message(FATAL_ERROR "${LIB} needs gb_ symbols it does not define: ${needed}")
  endif()
  message(STATUS "every gb_ symbol ${LIB} uses is its own")
elseif(MODE STREQUAL "no_engine")
  gb_symbols(${ENGINE} "--defined-only" engine)
  gb_symbols(${PROGRAM} "--defined-only" program)
  # program ∩ engine = program - (program - engine)
  set(not_engine ${program})
  list(REMOVE_ITEM not_engine ${engine})
  set(engine_in_program ${program})
  list(REMOVE_ITEM engine_in_program ${not_engine})
  if(engine_in_program)
    message(FATAL_ERROR "${PROGRAM} contains engine symbols: ${engine_in_program}")
  endif()
  execute_process(COMMAND ldd ${PROGRAM} OUTPUT_VARIABLE libs RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0 OR libs MATCHES "blas")
    message(FATAL_ERROR "ldd ${PROGRAM}:\n${libs}")
  endif()
  list(LENGTH program n)
  message(STATUS "${PROGRAM}: ${n} gb_ symbols, none of the engine; no BLAS loaded")
else()
  message(FATAL_ERROR "MODE must be self_contained or no_engine")
endif()
