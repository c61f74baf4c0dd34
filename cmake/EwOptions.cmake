# Tri-state backend options: AUTO (the default) builds a backend when its dependency
# is found, ON makes a missing dependency a configure error, OFF leaves it out.
# Each decision and its reason is printed in the configure summary.
set(EW_SUMMARY_LINES "")

function(ew_backend_option name doc)
  set(${name} AUTO CACHE STRING "${doc}: AUTO, ON or OFF")
  set_property(CACHE ${name} PROPERTY STRINGS AUTO ON OFF)
  string(TOUPPER "${${name}}" value)
  if(NOT value MATCHES "^(AUTO|ON|OFF|TRUE|FALSE|YES|NO|1|0)$")
    message(FATAL_ERROR "${name}=${${name}}: expected AUTO, ON or OFF")
  endif()
endfunction()

# ew_backend_decide(<option> <FOUND> <why-not> <what>): sets EW_HAVE_<X> in the
# caller and appends a summary line; ON with a missing dependency is an error.
macro(ew_backend_decide option found why what)
  string(REPLACE "EW_ENABLE_" "" _ew_name "${option}")
  string(TOUPPER "${${option}}" _ew_value)
  set(EW_HAVE_${_ew_name} OFF)
  if(_ew_value MATCHES "^(OFF|FALSE|NO|0)$")
    list(APPEND EW_SUMMARY_LINES "${_ew_name}: off (${option}=${${option}})")
  elseif(${found})
    set(EW_HAVE_${_ew_name} ON)
    list(APPEND EW_SUMMARY_LINES "${_ew_name}: on (${what})")
  elseif(_ew_value STREQUAL "AUTO")
    list(APPEND EW_SUMMARY_LINES "${_ew_name}: off (${why})")
  else()
    message(FATAL_ERROR "${option}=${${option}} but ${why}")
  endif()
endmacro()

function(ew_print_summary)
  message(STATUS "")
  message(STATUS "elementwise ${PROJECT_VERSION} backends:")
  message(STATUS "  SCALAR: on (always)")
  foreach(line IN LISTS EW_SUMMARY_LINES)
    message(STATUS "  ${line}")
  endforeach()
  message(STATUS "  tests: ${EW_BUILD_TESTS}, benchmarks: ${EW_BUILD_BENCH}, sanitizers: ${EW_SANITIZE}")
  message(STATUS "")
endfunction()
