# kparity-fuzz-host: the fuzz campaign for Python implementations (kparity.fuzz.check_implementation
# starts it and serves its cases; python/fuzz/host_main.cpp says why it is a process), installed in
# the package as kparity/bin/kparity-fuzz-host. Included from python/CMakeLists.txt. It needs
# RapidCheck (Debian: librapidcheck-dev); without it kparity.fuzz says so when called.
#
# Where kparity::fuzz comes from:
#   * a kparity build tree (scripts/test-python.sh's reuse mode, kparity_DIR=<build dir>): its static
#     libkparity_fuzz_lib.a (and libkparity_impl_abi.a when that build had DLPack), imported as built;
#   * otherwise (pip install . builds everything) fuzz/ is added to this build.
set(KPARITY_REPO_DIR ${CMAKE_CURRENT_LIST_DIR}/../..)
# The package carries the plugin ABI's header for plugin authors (kparity.fuzz.include_dir()).
install(FILES ${KPARITY_REPO_DIR}/abi/include/kparity/impl_abi.h DESTINATION kparity/include/kparity)
find_package(rapidcheck CONFIG QUIET)
if(NOT TARGET rapidcheck)
  message(STATUS "kparity: kparity-fuzz-host not built (kparity.fuzz needs RapidCheck: apt-get install -y librapidcheck-dev)")
  return()
endif()

if(TARGET kparity_fuzz_lib)
  set(kparity_fuzz_target kparity_fuzz_lib)
elseif(DEFINED kparity_DIR AND EXISTS ${kparity_DIR}/fuzz/libkparity_fuzz_lib.a)
  add_library(kparity_py_fuzz STATIC IMPORTED)
  set_target_properties(kparity_py_fuzz PROPERTIES
    IMPORTED_LOCATION ${kparity_DIR}/fuzz/libkparity_fuzz_lib.a
    INTERFACE_INCLUDE_DIRECTORIES ${KPARITY_REPO_DIR}/fuzz/include)
  target_link_libraries(kparity_py_fuzz INTERFACE kparity::judge rapidcheck nlohmann_json::nlohmann_json fmt::fmt)
  if(EXISTS ${kparity_DIR}/abi/libkparity_impl_abi.a)  # that build's fuzz library holds the plugin backend
    find_path(KPARITY_PY_DLPACK_DIR dlpack/dlpack.h)
    add_library(kparity_py_impl_abi STATIC IMPORTED)
    set_target_properties(kparity_py_impl_abi PROPERTIES
      IMPORTED_LOCATION ${kparity_DIR}/abi/libkparity_impl_abi.a
      INTERFACE_INCLUDE_DIRECTORIES "${KPARITY_REPO_DIR}/abi/include;${KPARITY_PY_DLPACK_DIR}")
    target_link_libraries(kparity_py_impl_abi INTERFACE kparity::ops ${CMAKE_DL_LIBS})
    target_link_libraries(kparity_py_fuzz INTERFACE kparity_py_impl_abi)
  endif()
  if(TARGET kparity::kernels)  # and the CUDA backend
    target_link_libraries(kparity_py_fuzz INTERFACE kparity::kernels CUDA::cudart)
  endif()
  set(kparity_fuzz_target kparity_py_fuzz)
else()
  add_subdirectory(${KPARITY_REPO_DIR}/fuzz ${CMAKE_CURRENT_BINARY_DIR}/kparity_fuzz)
  set(kparity_fuzz_target kparity_fuzz_lib)
endif()

add_executable(kparity_fuzz_host ${CMAKE_CURRENT_LIST_DIR}/host_main.cpp ${CMAKE_CURRENT_LIST_DIR}/protocol.cpp
               ${CMAKE_CURRENT_LIST_DIR}/case_handle.cpp)
set_target_properties(kparity_fuzz_host PROPERTIES OUTPUT_NAME kparity-fuzz-host)
target_link_libraries(kparity_fuzz_host PRIVATE ${kparity_fuzz_target} kparity::ops fmt::fmt nlohmann_json::nlohmann_json)
install(TARGETS kparity_fuzz_host RUNTIME DESTINATION kparity/bin)
