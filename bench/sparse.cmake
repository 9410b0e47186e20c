# Sparse attention benchmark (issue 6). bench/CMakeLists.txt belongs to the KDA work; it needs
# one line to pick this up: include(${CMAKE_CURRENT_SOURCE_DIR}/sparse.cmake)
if(KPARITY_WITH_CUDA)
  add_executable(bench_sparse ${CMAKE_CURRENT_SOURCE_DIR}/sparse_attention.cu)
  target_link_libraries(bench_sparse PRIVATE kparity::kernels CUDA::cublas)
endif()
