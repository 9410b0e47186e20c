// The SIMD lane loops of issue 25 against the scalar loops they replace (ScalarLoopsScope,
// accumulate.hpp): on calls drawn by every op's generator, small and kernel-sized, plain and
// special-value, the faithful model writes the same bits and the a-priori bounds are the same
// numbers. (The oracle's fast paths have their own guard: the `<op>/oracle/long-accumulator`
// properties.)
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <optional>
#include <rapidcheck.h>

#include "kparity/fuzz/backends/reference.hpp"
#include "kparity/fuzz/campaign/runner.hpp"
#include "kparity/fuzz/generators/op_spec.hpp"
#include "kparity/reference/accumulate.hpp"
#include "kparity/reference/error_bound.hpp"

namespace {

using namespace kparity;
using namespace kparity::fuzz;

bool same(double a, double b) {
  std::uint64_t x, y;
  std::memcpy(&x, &a, 8), std::memcpy(&y, &b, 8);
  return x == y || (std::isnan(a) && std::isnan(b));
}

std::optional<reference::ErrorBounds> bounds(const Call& c) {
  try {
    return reference::error_bound(c.op, c.bag());
  } catch (const std::invalid_argument&) {
    return std::nullopt;
  }
}

void lanes_equal_scalar(const OpFuzzSpec& spec, const GenConfig& cfg) {
  Call c = spec.draw(cfg);
  if (cfg.special_values) c.options.deep = false;
  RC_LOG() << c.description << "\n";
  const Call f = run_faithful(c);
  const auto b = bounds(c);
  std::optional<Call> fs;
  std::optional<reference::ErrorBounds> bs;
  {
    const reference::ScalarLoopsScope scalar;
    fs = run_faithful(c);
    bs = bounds(c);
  }
  for (const auto& name : c.written) {
    const TensorView x = f.at(name).view(), y = fs->at(name).view();
    for_each_element(x, [&](std::span<const std::int64_t> idx, std::int64_t) {
      RC_ASSERT(same(x.load(idx), y.load(idx)));
    });
  }
  RC_ASSERT(b.has_value() == bs.has_value());
  if (!b) return;
  for (const auto& [name, v] : *b) {
    const auto& w = bs->at(name);
    RC_ASSERT(v.size() == w.size());
    for (std::size_t i = 0; i < v.size(); ++i) RC_ASSERT(same(v[i], w[i]));
  }
}

TEST(Lanes, FaithfulModelAndBoundsEqualTheScalarLoops) {
  for (const OpFuzzSpec& spec : op_specs())
    for (bool large : {false, true})
      for (bool special : {false, true}) {
        GenConfig cfg;
        cfg.large = large;
        cfg.special_values = special;
        Property p;
        p.name = spec.op + "/lanes";
        p.body = [&spec, cfg] { lanes_equal_scalar(spec, cfg); };
        const auto r = run_property(p, 0x6c616e6573ull, large ? 2 : 30, 100, false);
        EXPECT_TRUE(r.passed) << spec.op << (large ? " kernel-sized" : " small") << (special ? " special" : "") << ": "
                              << r.message;
      }
}

}  // namespace
