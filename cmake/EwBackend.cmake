# ew_add_backend(<name> SOURCES ... [LIBRARIES ...]): one backend folder becomes an
# object library whose objects go into `elementwise`, and the registry learns that
# the backend is compiled in (EW_HAVE_<NAME>). Its dependencies stay private.
function(ew_add_backend name)
  cmake_parse_arguments(ARG "" "" "SOURCES;LIBRARIES" ${ARGN})
  set(target ew_backend_${name})
  add_library(${target} OBJECT ${ARG_SOURCES})
  target_include_directories(${target} PRIVATE "${PROJECT_SOURCE_DIR}/core/include"
                                               "${PROJECT_SOURCE_DIR}/core/internal"
                                               "${PROJECT_BINARY_DIR}/core/include")
  target_link_libraries(${target} PRIVATE ${ARG_LIBRARIES} ew_warnings)
  target_sources(elementwise PRIVATE $<TARGET_OBJECTS:${target}>)
  target_link_libraries(elementwise PRIVATE ${ARG_LIBRARIES})
  string(TOUPPER "${name}" upper)
  target_compile_definitions(elementwise PRIVATE EW_HAVE_${upper}=1)
endfunction()
