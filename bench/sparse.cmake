# Sparse attention benchmark (issue 6): prefill and decode against the measured GEMM and copy
# ceilings (cuBLAS, device-to-device copy) of the same run.
if(KPARITY_WITH_CUDA)
  add_executable(bench_sparse ${CMAKE_CURRENT_SOURCE_DIR}/sparse_attention.cu)
  target_link_libraries(bench_sparse PRIVATE kparity::kernels CUDA::cublas)
endif()
