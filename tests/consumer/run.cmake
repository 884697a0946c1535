# Builds and tests tests/consumer (a service outside elfin's tree) twice: against elfin installed
# from this build tree into a temporary prefix (find_package), and with elfin's sources added as a
# subdirectory. Run by ctest as `consumer.find_package_and_subdirectory`:
#   cmake -DELFIN_SOURCE_DIR=... -DELFIN_BINARY_DIR=... -DWORK_DIR=... -DCXX=... -DBUILD_TYPE=... -P run.cmake
cmake_minimum_required(VERSION 3.25)

function(step what)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "consumer: ${what} failed (${rc}):\n${out}\n${err}")
  endif()
  message(STATUS "consumer: ${what}: ok")
endfunction()

file(REMOVE_RECURSE ${WORK_DIR})
set(consumer ${ELFIN_SOURCE_DIR}/tests/consumer)
set(common -G Ninja -DCMAKE_CXX_COMPILER=${CXX} -DCMAKE_BUILD_TYPE=${BUILD_TYPE})

step("install elfin" ${CMAKE_COMMAND} --install ${ELFIN_BINARY_DIR} --prefix ${WORK_DIR}/prefix)
step("configure with find_package" ${CMAKE_COMMAND} -S ${consumer} -B ${WORK_DIR}/package ${common}
     -DCMAKE_PREFIX_PATH=${WORK_DIR}/prefix)
step("build with find_package" ${CMAKE_COMMAND} --build ${WORK_DIR}/package)
step("test with find_package" ${CMAKE_CTEST_COMMAND} --test-dir ${WORK_DIR}/package --output-on-failure)

step("configure with add_subdirectory" ${CMAKE_COMMAND} -S ${consumer} -B ${WORK_DIR}/subdirectory ${common}
     -DSHOP_ELFIN_SOURCE_DIR=${ELFIN_SOURCE_DIR})
step("build with add_subdirectory" ${CMAKE_COMMAND} --build ${WORK_DIR}/subdirectory)
step("test with add_subdirectory" ${CMAKE_CTEST_COMMAND} --test-dir ${WORK_DIR}/subdirectory --output-on-failure)

# Sanitizers are elfin's own business: ELFIN_SANITIZE instruments every source of elfin's tree and
# none of its parent's (configured only: the compile commands say it).
step("configure with add_subdirectory and ELFIN_SANITIZE" ${CMAKE_COMMAND} -S ${consumer} -B ${WORK_DIR}/sanitized
     ${common} -DSHOP_ELFIN_SOURCE_DIR=${ELFIN_SOURCE_DIR} -DELFIN_SANITIZE=address -DCMAKE_EXPORT_COMPILE_COMMANDS=ON)
file(READ ${WORK_DIR}/sanitized/compile_commands.json commands)
string(JSON count LENGTH "${commands}")
math(EXPR last "${count} - 1")
set(elfin_sources 0)
set(parent_sources 0)
foreach(i RANGE ${last})
  string(JSON file GET "${commands}" ${i} file)
  string(JSON command GET "${commands}" ${i} command)
  string(FIND "${command}" "-fsanitize=address" at)
  string(FIND "${file}" "${consumer}/" in_consumer)
  string(FIND "${file}" "${ELFIN_SOURCE_DIR}/" in_elfin)
  if(in_consumer EQUAL 0)
    if(NOT at EQUAL -1)
      message(FATAL_ERROR "consumer: ELFIN_SANITIZE reached the parent project's ${file}:\n${command}")
    endif()
    math(EXPR parent_sources "${parent_sources} + 1")
  elseif(in_elfin EQUAL 0)
    if(at EQUAL -1)
      message(FATAL_ERROR "consumer: ELFIN_SANITIZE missed elfin's ${file}:\n${command}")
    endif()
    math(EXPR elfin_sources "${elfin_sources} + 1")
  endif()
endforeach()
if(elfin_sources EQUAL 0 OR parent_sources EQUAL 0)
  message(FATAL_ERROR "consumer: the sanitized configuration's compile commands lack elfin's or the parent's sources")
endif()
# The parent's programs link the sanitizer's runtime, which elfin's objects call.
file(READ ${WORK_DIR}/sanitized/build.ninja ninja)
string(FIND "${ninja}" "\nbuild shop: " at)
string(SUBSTRING "${ninja}" ${at} -1 shop_link)
string(FIND "${shop_link}" "\n\n" end)  # the build statement ends at a blank line
string(SUBSTRING "${shop_link}" 0 ${end} shop_link)
string(FIND "${shop_link}" "LINK_FLAGS = -fsanitize=address" linked)
if(at EQUAL -1 OR linked EQUAL -1)
  message(FATAL_ERROR "consumer: the parent's program `shop` does not link the sanitizer runtime:\n${shop_link}")
endif()
message(STATUS "consumer: ELFIN_SANITIZE: ${elfin_sources} elfin sources instrumented, none of the parent's ${parent_sources}")

file(REMOVE_RECURSE ${WORK_DIR})
