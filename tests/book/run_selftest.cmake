# Runs book_check on testdata/<BOOK> and fails unless it exits with EXPECTED_EXIT and its output
# contains every line of testdata/<EXPECTED> (default <BOOK>.expected) verbatim (lines starting
# with '#' are comments). The expected lines must not contain ';', which file(STRINGS) would take
# for a list separator. PCH_INCLUDE, if given, is passed as --pch-include.
#
#   cmake -DCHECKER=<book_check> -DCOMPILER=<c++> -DFLAGS_FILE=<file> -DWORK_DIR=<dir>
#         -DBOOK=<good|bad> -DEXPECTED_EXIT=<n> [-DEXPECTED=<file>] [-DPCH_INCLUDE=<header>]
#         -P run_selftest.cmake

foreach(var IN ITEMS CHECKER COMPILER FLAGS_FILE WORK_DIR BOOK EXPECTED_EXIT)
    if(NOT DEFINED ${var})
        message(FATAL_ERROR "run_selftest.cmake: -D${var}=... is required")
    endif()
endforeach()

set(testdata "${CMAKE_CURRENT_LIST_DIR}/testdata")
if(NOT DEFINED EXPECTED)
    set(EXPECTED "${BOOK}.expected")
endif()
set(pch_args "")
if(DEFINED PCH_INCLUDE)
    set(pch_args --pch-include "${PCH_INCLUDE}")
endif()
# Run from testdata/ so that the report names pages "bad/src/page.md", as the expectations do.
execute_process(
    COMMAND "${CHECKER}" --book "${BOOK}" --compiler "${COMPILER}" --flags-file "${FLAGS_FILE}"
                         --work-dir "${WORK_DIR}" ${pch_args}
    WORKING_DIRECTORY "${testdata}"
    RESULT_VARIABLE exit_code
    OUTPUT_VARIABLE output
    ERROR_VARIABLE output)
message("${output}")

set(failures "")
if(NOT exit_code STREQUAL EXPECTED_EXIT)
    string(APPEND failures "\n  exit code ${exit_code}, expected ${EXPECTED_EXIT}")
endif()
file(STRINGS "${testdata}/${EXPECTED}" expected_lines)
foreach(expected IN LISTS expected_lines)
    if(expected MATCHES "^#")
        continue()
    endif()
    string(FIND "${output}" "${expected}" found)
    if(found EQUAL -1)
        string(APPEND failures "\n  missing from the output: ${expected}")
    endif()
endforeach()

if(failures)
    message(FATAL_ERROR "book_check --book ${BOOK} did not behave as expected:${failures}")
endif()
