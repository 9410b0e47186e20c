# Sparse attention benchmark (issue 6): prefill and decode against the measured GEMM and copy
# ceilings (cuBLAS, device-to-device copy) of the same run, and the peers of the same device call.
if(KPARITY_WITH_CUDA)
  add_executable(bench_sparse ${CMAKE_CURRENT_SOURCE_DIR}/sparse_attention.cu ${CMAKE_CURRENT_SOURCE_DIR}/common/peers.cpp)
  target_include_directories(bench_sparse PRIVATE ${CMAKE_CURRENT_SOURCE_DIR})
  target_link_libraries(bench_sparse PRIVATE kparity::kernels CUDA::cublas nlohmann_json::nlohmann_json)
endif()
