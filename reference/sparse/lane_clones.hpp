#pragma once
// KPARITY_CLONES: a lane loop compiled for AVX-512, AVX2 and the baseline, picked at run time
// (GCC's target_clones on x86-64; elsewhere the plain function). The sparse lane files share it.
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define KPARITY_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define KPARITY_CLONES
#endif
