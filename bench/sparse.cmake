# Sparse attention benchmark (issue 6). bench/CMakeLists.txt belongs to the KDA work; it needs
# one line to pick this up: include(${CMAKE_CURRENT_SOURCE_DIR}/sparse.cmake)
if(KPARITY_WITH_CUDA)
  add_executable(bench_sparse ${CMAKE_CURRENT_SOURCE_DIR}/sparse_attention.cu)
  target_link_libraries(bench_sparse PRIVATE kparity::kernels CUDA::cublas)
endif()
if(TARGET bench_sparse)
  # The kernels' public headers use std::span and the tuning structs designated initializers: C++20.
  # The file has no device code; where CMake cannot give nvcc C++20 (< 3.26) it is built as host C++.
  if(CMAKE_VERSION VERSION_LESS 3.26)
    set_source_files_properties(${CMAKE_CURRENT_SOURCE_DIR}/sparse_attention.cu PROPERTIES LANGUAGE CXX)
    target_compile_options(bench_sparse PRIVATE $<$<COMPILE_LANGUAGE:CXX>:-x c++>)
    set_target_properties(bench_sparse PROPERTIES LINKER_LANGUAGE CXX)
  else()
    set_target_properties(bench_sparse PROPERTIES CUDA_STANDARD 20 CUDA_STANDARD_REQUIRED ON)
  endif()
endif()
