# Relocatable package: find_package(kparity) gives kparity::core, kparity::diagnostics,
# kparity::reference, kparity::ops, kparity::judge (and kparity::kernels when built), plus a version file; a build-tree export
# lets a consumer use the build directory directly.
# Installing defaults on only when kparity is the top-level project (fmt's rule), so embedding it
# with add_subdirectory/FetchContent installs nothing into the parent's package.
option(KPARITY_INSTALL "Generate the install rules and the build-tree package" ${KPARITY_IS_TOP_LEVEL})
if(NOT KPARITY_INSTALL)
  return()
endif()
include(CMakePackageConfigHelpers)
set(KPARITY_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/kparity)
set(kparity_targets kparity_core kparity_diagnostics kparity_reference kparity_ops kparity_judge)
if(TARGET kparity_kernels)
  list(APPEND kparity_targets kparity_kernels)
endif()
install(TARGETS ${kparity_targets} EXPORT kparity-targets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
        RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
if(TARGET kparity_cli)
  install(TARGETS kparity_cli RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
endif()
foreach(dir core diagnostics reference ops judge kernels)
  if(EXISTS ${PROJECT_SOURCE_DIR}/${dir}/include/kparity)
    install(DIRECTORY ${PROJECT_SOURCE_DIR}/${dir}/include/kparity DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
  endif()
endforeach()
install(FILES ${PROJECT_BINARY_DIR}/diagnostics/gen/kparity/diagnostics/catalog_ids.hpp
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/kparity/diagnostics)
install(EXPORT kparity-targets NAMESPACE kparity:: DESTINATION ${KPARITY_CMAKE_DIR})
export(EXPORT kparity-targets NAMESPACE kparity:: FILE ${PROJECT_BINARY_DIR}/kparity-targets.cmake)
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/kparity-config.cmake.in
  ${PROJECT_BINARY_DIR}/kparity-config.cmake INSTALL_DESTINATION ${KPARITY_CMAKE_DIR})
write_basic_package_version_file(${PROJECT_BINARY_DIR}/kparity-config-version.cmake
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/kparity-config.cmake ${PROJECT_BINARY_DIR}/kparity-config-version.cmake
        DESTINATION ${KPARITY_CMAKE_DIR})
