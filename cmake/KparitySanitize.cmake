# KPARITY_SANITIZE=ON builds every kparity target with AddressSanitizer and UndefinedBehaviorSanitizer
# (scripts/test-sanitized.sh runs the CPU suite that way in CI). CPU targets only: nvcc cannot build
# device code under these sanitizers (compute-sanitizer covers the kernels on a GPU machine), so the
# CUDA kernels are switched off. Any UB report is fatal (-fno-sanitize-recover), so ctest sees it.
option(KPARITY_SANITIZE "Build with AddressSanitizer and UndefinedBehaviorSanitizer (CPU targets only)" OFF)
if(KPARITY_SANITIZE)
  if(KPARITY_CUDA STREQUAL "ON")
    message(FATAL_ERROR "KPARITY_SANITIZE=ON builds the CPU targets only: configure with -DKPARITY_CUDA=OFF")
  endif()
  set(KPARITY_CUDA OFF CACHE STRING "Build the CUDA kernels: AUTO (when nvcc is found), ON or OFF" FORCE)
  if(NOT CMAKE_CXX_COMPILER_ID MATCHES "GNU|Clang")
    message(FATAL_ERROR "KPARITY_SANITIZE=ON needs GCC or Clang (found ${CMAKE_CXX_COMPILER_ID})")
  endif()
  # -O1 -g1: ASan's recommended optimisation level, line tables for the reports; both compile
  # about twice as fast as -O2 -g, which matters on CI's two cores.
  set(kparity_sanitize_flags -fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer
      -O1 -g1)
  add_compile_options(${kparity_sanitize_flags})
  add_link_options(-fsanitize=address,undefined)
  message(STATUS "kparity: AddressSanitizer + UndefinedBehaviorSanitizer on, CUDA kernels off")
endif()
