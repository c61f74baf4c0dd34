# Runs COMMAND and fails unless it exits with EXIT and its output (stdout and stderr)
# contains MATCH: ctest alone can check either the exit status or the output, not both.
#   cmake -DCOMMAND=<program> [-DARGS=<one argument>] -DEXIT=<status> -DMATCH=<text> -P expect_exit.cmake
execute_process(COMMAND ${COMMAND} ${ARGS} RESULT_VARIABLE status OUTPUT_VARIABLE out ERROR_VARIABLE err)
message("${out}${err}")
if(NOT status STREQUAL "${EXIT}")
  message(FATAL_ERROR "exit status ${status}, expected ${EXIT}")
endif()
string(FIND "${out}${err}" "${MATCH}" at)
if(at EQUAL -1)
  message(FATAL_ERROR "the output does not contain: ${MATCH}")
endif()
