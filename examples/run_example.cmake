# Runs one example for ctest: the example must exit with 0 within the time limit and print a
# line matching EXPECT.
#   cmake -DEXAMPLE=<program> [-DARGS="<a> <b>"] -DEXPECT=<regex> -P run_example.cmake
separate_arguments(args UNIX_COMMAND "${ARGS}")
execute_process(COMMAND ${EXAMPLE} ${args}
                RESULT_VARIABLE exit_code
                OUTPUT_VARIABLE output
                ERROR_VARIABLE errors
                TIMEOUT 30)
message("${output}")
if(errors)
  message("stderr:\n${errors}")
endif()
if(NOT exit_code STREQUAL "0")
  message(FATAL_ERROR "${EXAMPLE} exited with '${exit_code}', expected 0")
endif()
if(NOT output MATCHES "${EXPECT}")
  message(FATAL_ERROR "${EXAMPLE}: no output matched '${EXPECT}'")
endif()
