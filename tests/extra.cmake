# Tests of the executable and of the installed package (included by tests/CMakeLists.txt).
# The fuzz CLI tests and the self-test run the real `kparity fuzz`.
if(TARGET test_fuzz_corpus AND TARGET kparity_cli)
  target_compile_definitions(test_fuzz_corpus PRIVATE KPARITY_CLI_PATH="$<TARGET_FILE:kparity_cli>")
  add_dependencies(test_fuzz_corpus kparity_cli)
  # Issue 7: CI runs the self-test itself (every planted bug caught, the controls clean).
  add_test(NAME fuzz.self_test COMMAND kparity_cli fuzz --self-test)
  set_tests_properties(fuzz.self_test PROPERTIES LABELS cpu TIMEOUT 300)
  # Issue 19 item 2: the controls (correct fp32 fake kernels in other accumulation orders, with fma,
  # the fused exponent, in fp64) through the campaign itself, fixed seed: 50 cases for each of their
  # 72 properties, about 26 s of CPU. A flagged control is a false alarm of the rule.
  add_test(NAME fuzz.controls COMMAND kparity_cli fuzz --backend control --cases 50 --jobs 2
                                      --corpus ${CMAKE_CURRENT_BINARY_DIR}/controls-corpus)
  set_tests_properties(fuzz.controls PROPERTIES LABELS cpu TIMEOUT 300)
  # The long tier (label long; registered with -DKPARITY_LONG_TESTS=ON, then `ctest -L long`): 1000
  # cases per property on another seed, i.e. 1.2 x 10^4 per op (6 controls x 2 properties x 1000);
  # measured 2026-12-01: 72000 cases in 186 s wall, 6.2 CPU minutes, 2 workers. The report lands in
  # the build tree.
  option(KPARITY_LONG_TESTS "Register the long test tiers (ctest label long)" OFF)
  if(KPARITY_LONG_TESTS)
    add_test(NAME fuzz.controls.long
             COMMAND kparity_cli fuzz --backend control --cases 1000 --seed 0x6c6f6e67 --jobs 2
                     --corpus ${CMAKE_CURRENT_BINARY_DIR}/controls-corpus
                     --report ${CMAKE_CURRENT_BINARY_DIR}/controls-long.json)
    set_tests_properties(fuzz.controls.long PROPERTIES LABELS "cpu;long" TIMEOUT 14400)
  endif()
endif()
# Issue 30: the accuracy comparison tool on the twelve captured chunk_kda calls, fla-chunk's model
# standing in for a kernel: its errors against the oracle must be within 3x of what chunk_kda itself
# erred on each call and tensor (the model has fla's rounding points, not its summation order).
if(TARGET kda_chunk_accuracy)
  add_test(NAME bench.kda_chunk_accuracy.fla_chunk_model
           COMMAND kda_chunk_accuracy --impl fla-chunk --check-ratio 3 ${PROJECT_SOURCE_DIR}/tests/data/fla_chunk_kda)
  set_tests_properties(bench.kda_chunk_accuracy.fla_chunk_model PROPERTIES LABELS cpu TIMEOUT 300)
endif()
foreach(cli_test test_cli test_gpu_cli)
  if(TARGET ${cli_test})
    # The CLI tests run the real binary, so they need its path and must build after it.
    target_compile_definitions(${cli_test} PRIVATE KPARITY_CLI_PATH="$<TARGET_FILE:kparity_cli>")
    add_dependencies(${cli_test} kparity_cli)
  endif()
endforeach()

# fmt's find-package test: install this build into a scratch prefix, move the prefix (the package
# must be relocatable), then configure, build and run examples/host_app against it; a second run
# uses the build-tree export instead of an installed copy.
set(cuda_root "")
if(KPARITY_WITH_CUDA AND CUDAToolkit_BIN_DIR)
  get_filename_component(cuda_root "${CUDAToolkit_BIN_DIR}" DIRECTORY)
endif()
if(NOT DEFINED KPARITY_INSTALL OR KPARITY_INSTALL)  # no install rules, nothing to test
  foreach(mode installed build-tree)
    add_test(NAME package.host_app.${mode}
             COMMAND ${CMAKE_COMMAND}
                     -DMODE=${mode}
                     -DKPARITY_BINARY_DIR=${PROJECT_BINARY_DIR}
                     -DHOST_APP_DIR=${PROJECT_SOURCE_DIR}/examples/host_app
                     -DWORK_DIR=${CMAKE_CURRENT_BINARY_DIR}/package/${mode}
                     -DGENERATOR=${CMAKE_GENERATOR}
                     -DCXX_COMPILER=${CMAKE_CXX_COMPILER}
                     -DBUILD_TYPE=$<CONFIG>
                     -DCUDA_ROOT=${cuda_root}
                     -P ${CMAKE_CURRENT_SOURCE_DIR}/package/host_app_test.cmake)
    set_tests_properties(package.host_app.${mode} PROPERTIES LABELS cpu TIMEOUT 600)
  endforeach()
endif()

# The implementation plugin ABI: its test area links the loader and builds the example plugins.
include(${CMAKE_CURRENT_SOURCE_DIR}/abi/abi.cmake)
