#include "replay_run.hpp"

#include "kparity/reference/kda.hpp"

namespace kparity::gpu_test {
using reference::Precision;

std::vector<bool> ReplayWorlds::step(std::uint64_t seed) {
  for (HostDecode* w : {&lp, &orc, &ker}) w->fresh_inputs(seed);
  std::vector<bool> flushed(lp.cfg.B);
  for (std::int64_t r = 0; r < lp.cfg.B; ++r) {
    const std::int64_t c = lp.wp.view().load_int_flat(r);
    flushed[r] = c == lp.cfg.L - 1 || (lp.cfg.with_force && lp.ff.view().load_int_flat(r) != 0);
  }
  state_before = ker.state;
  dev.upload_inputs(ker);
  dev.out.poison();
  const Status s = kernels::kda::replayssm_decode(dev.replay_args(ker), nullptr, kSyncLaunch);
  EXPECT_TRUE(s.ok()) << (s.first_error() ? s.first_error()->message : "");
  dev.download_all(ker);
  reference::kda::replayssm_decode(lp.replay_args(), Precision::faithful);
  reference::kda::replayssm_decode(orc.replay_args(), Precision::oracle);
  return flushed;
}

void ReplayWorlds::advance() {
  reference::kda::advance_cursors(lp.replay_args());
  orc.wp = lp.wp;
  ker.wp = lp.wp;
}

void ReplayWorlds::expect_step_matches(const std::vector<bool>& flushed, const std::vector<std::int64_t>& cursors,
                                       const std::string& tag) const {
  const DecodeCfg& c = lp.cfg;
  const double F = tol::factor(c.lower_bound.has_value());
  EXPECT_TRUE(close(ker.out, lp.out, orc.out, tol::kReplayOut, F, tag + " out"));
  bool any_row = false;  // all-padding batches legitimately write only zeros
  for (std::int64_t r = 0; r < c.B; ++r) any_row |= lp.idx.view().load_int_flat(r) >= 0;
  if (any_row) EXPECT_TRUE(nonzero(ker.out.view())) << tag;
  for (std::int64_t r = 0; r < c.B; ++r) {
    const std::int64_t s = lp.idx.view().load_int_flat(r);
    if (s < 0) {
      for (std::int64_t j = 0; j < c.HV * c.V; ++j)
        ASSERT_EQ(ker.out.view().select(0, r).load_flat(j), 0.0) << tag << " padding row " << r;
      continue;
    }
    const std::string row = tag + " row " + std::to_string(r);
    if (flushed[r]) {
      EXPECT_TRUE(close(ker.state.view().select(0, s), lp.state.view().select(0, s), orc.state.view().select(0, s),
                        tol::replay_state(c.state), F, row + " state"));
    } else {
      EXPECT_TRUE(bytes_equal(ker.state.view().select(0, s), state_before.view().select(0, s), row + " state untouched on append"));
      const std::int64_t cur = cursors[r];
      const auto at = [&](const Tensor& t) { return t.view().select(0, s).select(1, cur); };
      EXPECT_TRUE(close(at(ker.d), at(lp.d), at(orc.d), tol::kRingDK, F, row + " d ring"));
      EXPECT_TRUE(close(at(ker.k), at(lp.k), at(orc.k), tol::kRingDK, F, row + " k ring"));
      EXPECT_TRUE(close(at(ker.g), at(lp.g), at(orc.g), tol::kRingG, F, row + " g ring"));
    }
  }
}

}  // namespace kparity::gpu_test
