# One row of the malformed-files table: `elfin check <file>` must exit with 1 and print every
# text the file lists in its `# expect: <text>` lines (literal text, not regexes). `# args: ...`
# adds options to the command.
#   cmake -DELFIN=<elfin> -DFILE=<topology.toml> -P check_malformed.cmake
file(STRINGS "${FILE}" expects REGEX "^# expect: ")
file(STRINGS "${FILE}" arg_lines REGEX "^# args: ")
if(NOT expects)
  message(FATAL_ERROR "${FILE} has no '# expect:' line")
endif()
set(args "")
foreach(line IN LISTS arg_lines)
  string(REGEX REPLACE "^# args: " "" line "${line}")
  separate_arguments(more UNIX_COMMAND "${line}")
  list(APPEND args ${more})
endforeach()
execute_process(COMMAND ${ELFIN} check "${FILE}" ${args}
                RESULT_VARIABLE exit_code OUTPUT_VARIABLE output ERROR_VARIABLE errors TIMEOUT 30)
message("${output}${errors}")
if(NOT exit_code STREQUAL "1")
  message(FATAL_ERROR "elfin check ${FILE} exited with '${exit_code}', expected 1")
endif()
foreach(expect IN LISTS expects)
  string(REGEX REPLACE "^# expect: " "" expect "${expect}")
  string(FIND "${output}${errors}" "${expect}" at)
  if(at EQUAL -1)
    message(FATAL_ERROR "elfin check ${FILE}: the output lacks the expected text:\n  ${expect}")
  endif()
endforeach()
