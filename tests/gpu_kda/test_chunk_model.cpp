// Host checks of the chunked kernel's algorithm (no GPU): its scalar model (chunk_model.hpp) in fp64
// must reproduce the recurrence (the reference's oracle) on random calls and at the gate extremes,
// so a formula mistake in docs/kda_chunk_kernel.md is caught before device time; the fp32/tf32 model
// stays finite and close to the oracle, and its error is printed next to the fp32 recurrence's. The
// same for the chain two and four chunks a step (docs/kda_chunk_composed.md; its CUDA form was removed
// after measuring slower on 2026-12-06, the model kept for a next multi-chunk design): its fp64
// form is the recurrence, and its fp32/tf32 form's error is printed beside the kernel's and fla's.
#include <gtest/gtest.h>

#include <array>
#include <cstdio>
#include <string>

#include "chunk_case.hpp"
#include "chunk_model.hpp"
#include "chunk_tolerance.hpp"
#include "compare.hpp"
#include "kparity/reference/kda_chunk.hpp"
#include "kparity/reference/precision_profile.hpp"

namespace kparity::gpu_test {
namespace {

using reference::Precision;

constexpr std::array<int, 2> kComposed = {2, 4};  // chunks a chain step of the composed forms

struct Runs {
  ChunkHost oracle, exact, model, faithful, fla;
  std::array<ChunkHost, 2> comp_exact, comp;  // per kComposed entry
};

Runs run_all(const ChunkHost& h) {
  Runs r{h, h, h, h, h, {h, h}, {h, h}};
  {
    // fla chunk_kda's rounding points (the fla-chunk profile): the accuracy the kernel must match.
    reference::PrecisionProfileScope fla(reference::PrecisionProfile::fla_chunk);
    reference::kda::chunk(r.fla.args(), Precision::faithful, ValidateOptions::upstream());
  }
  // upstream() checks only: the deep pass would refuse the -inf gates the extremes test.
  reference::kda::chunk(r.oracle.args(), Precision::oracle, ValidateOptions::upstream());
  reference::kda::chunk(r.faithful.args(), Precision::faithful, ValidateOptions::upstream());
  chunk_model(r.exact.args(), ChunkModel::exact);
  chunk_model(r.model.args(), ChunkModel::kernel);
  for (std::size_t x = 0; x < kComposed.size(); ++x) {
    chunk_model(r.comp_exact[x].args(), ChunkModel::exact, kComposed[x]);
    chunk_model(r.comp[x].args(), ChunkModel::kernel, kComposed[x]);
  }
  return r;
}

// fp64 model vs fp64 recurrence: equal up to fp64 rounding (1e-9 of the tensor's scale), then both
// round once into the stored dtype: one ulp of it apart at most (2^-23 relative for fp32, storage
// ulp for 16-bit).
::testing::AssertionResult same_as_oracle(const Tensor& x, const Tensor& o, const std::string& what) {
  const double s = chunk_tol::max_abs(o.view());
  return close_to(x.view(), o.view(), Tol{1e-9 * s, 1e-9 + std::ldexp(1.0, -23), 1}, what);
}

struct Worst {
  double model = 0, faithful = 0, fla = 0;
  std::array<double, 2> comp{};
  // Root mean square of the same relative errors over every element: the worst element is often a
  // 16-bit output's own rounding, the same for every form; the mean shows the forms apart.
  double sq_model = 0, sq_fla = 0;
  std::array<double, 2> sq_comp{};
  std::int64_t n = 0;
  void print(const char* what) const {
    const auto rms = [&](double s) { return n ? std::sqrt(s / static_cast<double>(n)) : 0.0; };
    std::printf("%s: worst error of the tensor's scale: fp32/tf32 chunk model %.3e (composed, %d and %d chunks a "
                "step: %.3e, %.3e), fla-chunk model %.3e, fp32 recurrence %.3e; rms: chunk model %.3e, composed "
                "%.3e and %.3e, fla-chunk %.3e\n",
                what, model, kComposed[0], kComposed[1], comp[0], comp[1], fla, faithful, rms(sq_model),
                rms(sq_comp[0]), rms(sq_comp[1]), rms(sq_fla));
  }
};

void check_case(const ChunkHost& h, Worst& w) {
  const Runs r = run_all(h);
  EXPECT_TRUE(same_as_oracle(r.exact.out, r.oracle.out, h.tag + " out"));
  if (h.a.output_final_state) EXPECT_TRUE(same_as_oracle(r.exact.fin, r.oracle.fin, h.tag + " final state"));
  for (std::size_t x = 0; x < kComposed.size(); ++x) {
    const std::string tag = h.tag + ", " + std::to_string(kComposed[x]) + " chunks a step";
    EXPECT_TRUE(same_as_oracle(r.comp_exact[x].out, r.oracle.out, tag + " out"));
    if (h.a.output_final_state) EXPECT_TRUE(same_as_oracle(r.comp_exact[x].fin, r.oracle.fin, tag + " final state"));
  }
  // The fp32 model: finite wherever the oracle is, within 1% of the tensor's scale (a sanity bar:
  // the kernel's own bar is relative to this model, chunk_tolerance.hpp).
  const auto rel_err = [](const Tensor& x, const Tensor& o) {
    const double s = std::max(chunk_tol::max_abs(o.view()), 1e-30);
    double e = 0;
    for (std::int64_t i = 0; i < o.numel(); ++i) {
      const double a = x.view().load_flat(i), b = o.view().load_flat(i);
      if (std::isfinite(b)) e = std::max(e, std::isfinite(a) ? std::abs(a - b) / s : INFINITY);
    }
    return e;
  };
  const double em = std::max(rel_err(r.model.out, r.oracle.out),
                             h.a.output_final_state ? rel_err(r.model.fin, r.oracle.fin) : 0.0);
  const double ef = std::max(rel_err(r.faithful.out, r.oracle.out),
                             h.a.output_final_state ? rel_err(r.faithful.fin, r.oracle.fin) : 0.0);
  const double el = std::max(rel_err(r.fla.out, r.oracle.out),
                             h.a.output_final_state ? rel_err(r.fla.fin, r.oracle.fin) : 0.0);
  const auto add_sq = [&](const Tensor& x, const Tensor& o, double& acc, bool count) {
    const double s = std::max(chunk_tol::max_abs(o.view()), 1e-30);
    for (std::int64_t i = 0; i < o.numel(); ++i) {
      const double a = x.view().load_flat(i), b = o.view().load_flat(i);
      if (std::isfinite(a) && std::isfinite(b)) acc += ((a - b) / s) * ((a - b) / s), w.n += count;
    }
  };
  for (const bool fin : {false, true}) {
    if (fin && !h.a.output_final_state) continue;
    const auto& o = fin ? r.oracle.fin : r.oracle.out;
    add_sq(fin ? r.model.fin : r.model.out, o, w.sq_model, true);
    for (std::size_t x = 0; x < kComposed.size(); ++x) add_sq(fin ? r.comp[x].fin : r.comp[x].out, o, w.sq_comp[x], false);
    add_sq(fin ? r.fla.fin : r.fla.out, o, w.sq_fla, false);
  }
  EXPECT_LT(em, 1e-2) << h.tag << " (fp32 recurrence: " << ef << ")";
  w.model = std::max(w.model, em);
  for (std::size_t x = 0; x < kComposed.size(); ++x) {
    const double ec = std::max(rel_err(r.comp[x].out, r.oracle.out),
                               h.a.output_final_state ? rel_err(r.comp[x].fin, r.oracle.fin) : 0.0);
    EXPECT_LT(ec, 1e-2) << h.tag << ", " << kComposed[x] << " chunks a step (fp32 recurrence: " << ef << ")";
    w.comp[x] = std::max(w.comp[x], ec);
  }
  w.faithful = std::max(w.faithful, ef);
  w.fla = std::max(w.fla, el);
}

TEST(ChunkModel, ChunkedAlgorithmIsTheRecurrence) {
  Worst w;
  for (std::uint64_t seed = 1; seed <= 60; ++seed) check_case(random_chunk_case(seed), w);
  w.print("random calls");
}

TEST(ChunkModel, LongSequencesCrossManyChunks) {
  Worst w;
  for (std::uint64_t seed = 1; seed <= 6; ++seed) check_case(random_chunk_case(seed, {.K = 32, .V = 16, .max_len = 300}), w);
  w.print("sequences up to 300 tokens");
}

TEST(ChunkModel, GateExtremesStayFiniteAndRight) {
  for (GateExtreme x : {GateExtreme::lower_bound, GateExtreme::minus8, GateExtreme::minus_inf}) {
    Worst w;
    for (std::uint64_t seed = 1; seed <= 12; ++seed)
      check_case(random_chunk_case(seed, {.K = 32, .V = 32, .max_len = 70, .extreme = x}), w);
    w.print(x == GateExtreme::lower_bound ? "g = -5" : x == GateExtreme::minus8 ? "g = -8" : "g with -inf");
  }
}

TEST(ChunkModel, AgreesWithTheReferenceProfileOfTheKernel) {
  // Two implementations of docs/kda_chunk_kernel.md written apart: this test's model and the
  // reference's kparity-chunk precision profile (reference/kda/chunk_kparity.cpp). They differ only
  // in the summation orders the doc leaves to the hardware, so they meet the kernel's own recipe
  // (chunk_tolerance.hpp); a rounding point read differently from the doc would not.
  for (std::uint64_t seed = 1; seed <= 40; ++seed) {
    const ChunkHost h = random_chunk_case(seed);
    ChunkHost model = h, prof = h;
    chunk_model(model.args(), ChunkModel::kernel);
    {
      reference::PrecisionProfileScope scope(reference::PrecisionProfile::kparity_chunk);
      reference::kda::chunk(prof.args(), Precision::faithful, ValidateOptions::upstream());
    }
    EXPECT_TRUE(close_to(prof.out.view(), model.out.view(), chunk_tol::vs_model(model.out.view()), h.tag + " out"));
    if (h.a.output_final_state)
      EXPECT_TRUE(
          close_to(prof.fin.view(), model.fin.view(), chunk_tol::vs_model(model.fin.view()), h.tag + " final state"));
  }
}

}  // namespace
}  // namespace kparity::gpu_test
