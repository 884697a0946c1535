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

file(REMOVE_RECURSE ${WORK_DIR})
