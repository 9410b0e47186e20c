#include "kparity/fuzz/kda_gen.hpp"

#include <rapidcheck.h>

namespace kparity::fuzz {

KdaDecodeShape draw_kda_decode_shape(const std::vector<std::int64_t>& head_dims, std::int64_t max_batch) {
  KdaDecodeShape s;
  s.H = *rc::gen::inRange<std::int64_t>(1, 3);
  s.G = *rc::gen::element<std::int64_t>(1, 2, 4);
  s.K = *rc::gen::elementOf(head_dims);
  s.V = *rc::gen::elementOf(head_dims);
  s.L = *rc::gen::element<std::int64_t>(1, 2, 4, 16);
  s.B = *rc::gen::inRange<std::int64_t>(1, max_batch + 1);
  s.slots = s.B + *rc::gen::inRange<std::int64_t>(0, 3);
  s.slot_pad = *rc::gen::element<std::int64_t>(0, 257);
  s.act = *rc::gen::element(DType::bf16, DType::f16, DType::f32);
  s.state = *rc::gen::element(DType::f32, DType::bf16, DType::f16);
  s.l2norm = *rc::gen::arbitrary<bool>();
  s.bounded = *rc::gen::arbitrary<bool>();
  s.forced = *rc::gen::arbitrary<bool>();
  s.padding_rows = *rc::gen::inRange(0, 2);
  return s;
}

}  // namespace kparity::fuzz
