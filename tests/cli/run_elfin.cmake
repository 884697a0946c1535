# Runs the `elfin` command for ctest: it must exit with EXIT_CODE (default 0) within the time
# limit and print text matching EXPECT (a regex).
#   cmake -DELFIN=<elfin> -DARGS="<a> <b>" -DEXPECT=<regex> [-DEXIT_CODE=<n>] -P run_elfin.cmake
separate_arguments(args UNIX_COMMAND "${ARGS}")
if(NOT DEFINED EXIT_CODE)
  set(EXIT_CODE 0)
endif()
execute_process(COMMAND ${ELFIN} ${args}
                RESULT_VARIABLE exit_code OUTPUT_VARIABLE output ERROR_VARIABLE errors TIMEOUT 30)
message("${output}${errors}")
if(NOT exit_code STREQUAL "${EXIT_CODE}")
  message(FATAL_ERROR "elfin ${ARGS} exited with '${exit_code}', expected ${EXIT_CODE}")
endif()
if(NOT "${output}${errors}" MATCHES "${EXPECT}")
  message(FATAL_ERROR "elfin ${ARGS}: no output matched '${EXPECT}'")
endif()
