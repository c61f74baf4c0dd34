include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

install(TARGETS elementwise EXPORT elementwiseTargets
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(DIRECTORY core/include/ew DESTINATION ${CMAKE_INSTALL_INCLUDEDIR} FILES_MATCHING PATTERN "*.hpp")
install(FILES ${PROJECT_BINARY_DIR}/core/include/ew/version.hpp DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/ew)
install(EXPORT elementwiseTargets NAMESPACE elementwise:: DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/elementwise)
configure_package_config_file(cmake/elementwiseConfig.cmake.in
  ${PROJECT_BINARY_DIR}/elementwiseConfig.cmake INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/elementwise)
write_basic_package_version_file(${PROJECT_BINARY_DIR}/elementwiseConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/elementwiseConfig.cmake ${PROJECT_BINARY_DIR}/elementwiseConfigVersion.cmake
        DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/elementwise)
