// Three libraries the loader must refuse, one per macro (tests/abi/abi.cmake builds each): an ABI
// version from the future, a plugin without any op, and a library that is no plugin at all.
#include <kparity/impl_abi.h>

#if defined(KPARITY_TEST_FUTURE_ABI)
static const kparity_impl_info info = {999u, "from-the-future", kDLCPU};
KPARITY_IMPL_EXPORT const kparity_impl_info* kparity_impl_get_info(void) { return &info; }
KPARITY_IMPL_EXPORT int kparity_impl_kda_packed_decode KPARITY_IMPL_KDA_PACKED_DECODE_PARAMS {
  (void)mixed_qkv, (void)a, (void)b, (void)A_log, (void)dt_bias, (void)scale, (void)initial_state, (void)out;
  (void)ssm_state_indices, (void)use_qk_l2norm_in_kernel, (void)lower_bound;
  return kparity_impl_fail(ctx, KPARITY_IMPL_ERROR, "never called");
}
#elif defined(KPARITY_TEST_NO_OPS)
static const kparity_impl_info info = {KPARITY_IMPL_ABI_VERSION, "no-ops", kDLCPU};
KPARITY_IMPL_EXPORT const kparity_impl_info* kparity_impl_get_info(void) { return &info; }
#else
KPARITY_IMPL_EXPORT int some_other_library_function(void) { return 42; }
#endif
