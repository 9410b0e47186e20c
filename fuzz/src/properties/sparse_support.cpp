// What the sparse properties share (sparse_support.hpp).
#include "sparse_support.hpp"

#include <cmath>
#include <rapidcheck.h>
#include <stdexcept>

#include "kparity/fuzz/generators/sparse_gen.hpp"
#include "kparity/fuzz/properties/compare.hpp"
#include "kparity/ops/op_table.hpp"

namespace kparity::fuzz::sparse_fuzz {

using reference::Precision;

const OpFuzzSpec& spec(std::string_view op) {
  static const std::vector<OpFuzzSpec> specs = sparse_specs();
  for (const auto& s : specs)
    if (s.op == op) return s;
  throw std::invalid_argument("no sparse spec for " + std::string(op));
}

Call draw(std::string_view op, GenConfig g) {
  Call c = spec(op).draw(g);
  RC_LOG() << c.description << "\n";
  return c;
}

Call run(const Call& c, Precision p) {
  Call r = c;
  for (const auto& n : r.pure_outputs) r.at(n).poison();
  ops::run_reference(r.op, r.bag(), p, r.options);
  return r;
}

void ensure_lse(Call& c) {
  if (c.flags["return_lse"]) return;
  c.flags["return_lse"] = true;
  c.tensors["lse"] = Tensor(DType::f32, {tokens(c), heads(c)});
  c.written.push_back("lse");
  c.pure_outputs.push_back("lse");
}

std::uint64_t draw_seed() { return *rc::gen::arbitrary<std::uint64_t>(); }

void expect_bits(const Call& got, const Call& want, const std::string& what) {
  for (const auto& n : want.written) {
    const std::string d = bit_diff(got.at(n).view(), want.at(n).view());
    if (!d.empty()) RC_FAIL(what + ": `" + n + "` " + d);
  }
}

double out_noise(const Magnitudes& m) {
  return 0x1p-50 * (static_cast<double>(m.max_keys) + 1.0) * (1.0 + m.max_logit) * m.max_selected;
}
double lse_noise(const Magnitudes& m) { return 0x1p-50 * (static_cast<double>(m.max_keys) + 2.0 + m.max_logit); }

void expect_twins(const Call& got, const Call& want, const Magnitudes& m, const std::string& what) {
  const DType dt = want.at("q").dtype();
  for (const auto& name : want.written) {
    const bool out = name == "out";
    const double atol = out ? dtype_min_subnormal(dt) + out_noise(m) : 0x1p-149 + lse_noise(m);
    const double rtol = out ? dtype_eps(dt) : 0x1p-23;
    const std::string d = compare_close(got.at(name).view(), want.at(name).view(), atol, rtol);
    if (!d.empty()) RC_FAIL(what + ": `" + name + "` " + d);
  }
}

bool block_bits_equal(const Call& a, const Call& b, I t, I h) {
  const TensorView ao = a.at("out").view().select(0, t).select(0, h), bo = b.at("out").view().select(0, t).select(0, h);
  if (!bit_diff(ao, bo).empty()) return false;
  if (!b.flags.at("return_lse")) return true;
  return bit_diff(a.at("lse").view().select(0, t).select(0, h), b.at("lse").view().select(0, t).select(0, h)).empty();
}

std::string block(I t, I h) { return "[" + std::to_string(t) + ", " + std::to_string(h) + "]"; }

float sink32(const Call& c, I h) { return static_cast<float>(c.at("attn_sink").view().load_flat(h)); }

double shift_of(const Call& c) {
  const auto it = c.scalars.find("replicated_logit_shift");
  return it == c.scalars.end() ? 0.0 : it->second;
}

void make_rows_finite(Call& c) {
  for (const auto& s : sources_of(c.op)) {
    const TensorView v = c.at(s.rows).view();
    for_each_element(v, [&](std::span<const I> i, I) {
      if (!std::isfinite(v.load(i))) v.store(i, 1.0);
    });
  }
}

}  // namespace kparity::fuzz::sparse_fuzz
