// `kparity fuzz --bench-oracle` (oracle_bench.hpp). Uses only what the fuzz library offered at the
// baseline commit c6c0638 as well (the runner, the references, the rule, the KDA call builder), so
// the same file measures the baseline: bench/fuzz/oracle_bench_main.cpp built against it.
#include "kparity/fuzz/campaign/oracle_bench.hpp"

#include <time.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <optional>
#include <ostream>
#include <stdexcept>

#include <fmt/format.h>

#include "kparity/core/random.hpp"
#include "kparity/core/tensor.hpp"
#include "kparity/diagnostics/catalog.hpp"
#include "kparity/fuzz/backends/reference.hpp"
#include "kparity/fuzz/campaign/runner.hpp"
#include "kparity/fuzz/generators/kda_case.hpp"
#include "kparity/fuzz/generators/op_spec.hpp"
#include "kparity/fuzz/properties/differential.hpp"
#include "kparity/reference/error_bound.hpp"

namespace kparity::fuzz {
namespace {

using I = std::int64_t;

double process_cpu_seconds() {
  timespec t{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
}
double wall_seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

bool selected(const std::string& op, const std::vector<std::string>& ops) {
  if (ops.empty()) return true;
  for (const auto& w : ops)
    if (op == w || op.rfind(w + "/", 0) == 0) return true;
  return false;
}

// Folds the bits of every value `c` wrote into `digest` (FNV-1a), every NaN as one value: the
// references' NaNs carry no meaning in their sign or payload (the rule compares classes), and those
// follow the order a vector instruction takes its operands in.
void fold(const Call& c, std::uint64_t& digest) {
  for (const auto& name : c.written) {
    const TensorView v = c.at(name).view();
    for_each_element(v, [&](std::span<const std::int64_t> idx, std::int64_t) {
      const double x = std::isnan(v.load(idx)) ? std::numeric_limits<double>::quiet_NaN() : v.load(idx);
      std::uint64_t bits;
      std::memcpy(&bits, &x, 8);
      for (int k = 0; k < 8; ++k) digest = (digest ^ ((bits >> (8 * k)) & 0xff)) * 0x100000001b3ull;
    });
  }
}

bool same_bits(const reference::ErrorBounds& a, const reference::ErrorBounds& b) {
  if (a.size() != b.size()) return false;
  for (const auto& [name, v] : a) {
    const auto it = b.find(name);
    if (it == b.end() || it->second.size() != v.size()) return false;
    if (!v.empty() && std::memcmp(v.data(), it->second.data(), v.size() * sizeof(double)) != 0) return false;
  }
  return true;
}

// One case's parts, timed, added to `row`.
void time_case(const Call& c, const OpFuzzSpec& spec, OracleBenchRow& row) {
  double c0 = process_cpu_seconds(), w0 = wall_seconds();
  std::optional<reference::ErrorBounds> shared;  // the sparse ops' bounds from the oracle's pass
  const Call o = run_oracle_written(c, shared, std::nullopt);  // as the campaign's rule runs them (run_and_judge)
  double c1 = process_cpu_seconds();
  const Call f = run_faithful_written(c);
  double c2 = process_cpu_seconds();
  const DifferentialResult r = judge(c, o, f, f, spec);
  double c3 = process_cpu_seconds(), w3 = wall_seconds();
  row.oracle += c1 - c0;
  row.faithful += c2 - c1;
  row.rule += c3 - c2;
  row.wall += w3 - w0;
  fold(o, row.oracle_digest);
  fold(f, row.faithful_digest);
  if (!r.pass) throw std::runtime_error(c.op + ": the faithful model as a backend broke the rule: " + r.detail);
  if (std::getenv("KPARITY_BENCH_VERBOSE") != nullptr) {
    std::uint64_t od = 0xcbf29ce484222325ull;
    fold(o, od);
    std::fprintf(stderr, "    oracle %8.2f ms  faithful %8.2f ms  rule %8.2f ms  %016llx %s\n", 1e3 * (c1 - c0),
                 1e3 * (c2 - c1), 1e3 * (c3 - c2), static_cast<unsigned long long>(od), c.description.c_str());
  }
  // The a-priori bound alone (the rule above computed it too).
  const double b0 = process_cpu_seconds();
  reference::ErrorBounds bounds;
  try {
    bounds = reference::error_bound(c.op, c.bag());
  } catch (const std::invalid_argument&) {  // an op without bounds (kda/chunk)
  }
  row.bound += process_cpu_seconds() - b0;
  // The bounds the rule took from the oracle's pass must be error_bound's, bit for bit.
  if (shared && !same_bits(*shared, bounds))
    throw std::runtime_error(c.op + ": the oracle's pass gave other a-priori bounds than error_bound: " + c.description);
  for (const auto& [name, v] : bounds)
    for (double y : v) {
      const double x = std::isnan(y) ? std::numeric_limits<double>::quiet_NaN() : y;
      std::uint64_t bits;
      std::memcpy(&bits, &x, 8);
      for (int k = 0; k < 8; ++k) row.bound_digest = (row.bound_digest ^ ((bits >> (8 * k)) & 0xff)) * 0x100000001b3ull;
    }
  ++row.cases;
}

// ---- the generators' tiers -----------------------------------------------------------------------

OracleBenchRow generated_tier(const OpFuzzSpec& spec, bool large, const OracleBenchOptions& o) {
  OracleBenchRow row;
  row.op = spec.op;
  row.tier = large ? "kernel" : "small";
  for (bool special : {false, true}) {
    GenConfig cfg;
    cfg.large = large;
    cfg.special_values = special;
    Property p;
    p.name = spec.op + "/bench-oracle" + (special ? "-special-values" : "");
    p.kind = "bench";
    p.op = spec.op;
    p.body = [&spec, cfg, &row] {
      Call c = spec.draw(cfg);
      if (cfg.special_values) c.options.deep = false;  // as differential_property runs it
      time_case(c, spec, row);
    };
    PropertyBudget budget;
    budget.seed = o.seed;
    budget.cases = o.cases;
    budget.shrink = false;
    const PropertyOutcome out = run_property(p, budget);
    (void)take_buckets();
    if (!out.passed) throw std::runtime_error(p.name + ": " + out.message);
  }
  return row;
}

// ---- real-model calls ------------------------------------------------------------------------------

constexpr I kModelD = 512, kModelH = 128, kModelTopK = 2048, kModelRows = 4096;

Tensor normal(DType dt, Shape shape, std::uint64_t seed, double sd = 1.0) {
  Tensor t(dt, std::move(shape));
  t.fill_normal(seed, 0.0, sd);
  return t;
}

// `tokens` CSR lists of `per_token` distinct rows of [0, rows), drawn from `seed`.
void csr(Call& c, const char* indptr, const char* indices, I tokens, I per_token, I rows, std::uint64_t seed) {
  Rng rng(seed);
  Tensor idx(DType::i32, {tokens * per_token}), ptr(DType::i32, {tokens + 1});
  std::vector<I> pool(static_cast<std::size_t>(rows));
  for (I t = 0; t <= tokens; ++t) ptr.view().store_int(std::array<I, 1>{t}, t * per_token);
  for (I t = 0; t < tokens; ++t) {
    for (I r = 0; r < rows; ++r) pool[static_cast<std::size_t>(r)] = r;
    for (I j = 0; j < per_token; ++j) {  // a partial Fisher-Yates shuffle: distinct rows
      std::swap(pool[static_cast<std::size_t>(j)], pool[static_cast<std::size_t>(rng.integer(j, rows - 1))]);
      idx.view().store_int(std::array<I, 1>{t * per_token + j}, pool[static_cast<std::size_t>(j)]);
    }
  }
  c.tensors[indices] = std::move(idx);
  c.tensors[indptr] = std::move(ptr);
}

Call sparse_model_call(bool prefill, std::uint64_t seed) {
  Call c;
  const I T = prefill ? 2 : 1;
  c.op = prefill ? "sparse/paged_prefill" : "sparse/paged_decode";
  c.tensors["q"] = normal(DType::bf16, {T, kModelH, kModelD}, seed ^ 0x71);
  c.tensors["unified_kv"] = normal(DType::bf16, {kModelRows, kModelD}, seed ^ 0x6b76);
  c.tensors["attn_sink"] = normal(DType::f32, {kModelH}, seed ^ 0x73);
  c.scalars["softmax_scale"] = 1.0 / std::sqrt(static_cast<double>(kModelD));
  if (prefill) {
    const I extend = 128;
    csr(c, "kv_indptr_prefix", "kv_indices_prefix", T, kModelTopK - extend, kModelRows, seed ^ 0x70);
    c.tensors["kv"] = normal(DType::bf16, {256, kModelD}, seed ^ 0x6b);
    csr(c, "kv_indptr_extend", "kv_indices_extend", T, extend, 256, seed ^ 0x65);
    c.scalars["replicated_logit_shift"] = 0.0;
  } else {
    csr(c, "kv_indptr", "kv_indices", T, kModelTopK, kModelRows, seed ^ 0x69);
  }
  c.flags["return_lse"] = true;
  c.tensors["out"] = Tensor(DType::bf16, {T, kModelH, kModelD});
  c.tensors["lse"] = Tensor(DType::f32, {T, kModelH});
  c.written = {"out", "lse"};
  c.pure_outputs = c.written;
  for (const auto& n : c.written) c.tensors[n].poison();
  c.description = fmt::format("model: T={} H={} D={} keys={} bf16", T, kModelH, kModelD, kModelTopK);
  return c;
}

Call kda_model_call(const std::string& op, std::uint64_t seed) {
  KdaShape s;
  s.op = op;
  s.H = 32, s.G = 1, s.K = 128, s.V = 128;
  s.act = DType::bf16, s.state = DType::f32, s.gate_dt = DType::bf16, s.params_dt = DType::f32;
  s.l2norm = true;
  s.lower_bound = std::nullopt;  // the softplus gate
  s.scale = 1.0 / std::sqrt(128.0);
  s.values = KdaValues::typical;
  s.seed = seed;
  if (op == "kda/recurrent") {
    s.seqlens = {16};
  } else {
    s.B = 8, s.slots = 8;
    for (I b = 0; b < s.B; ++b) s.slot.push_back(b);
    if (op == "kda/replayssm_decode") {
      s.L = 16;
      s.ring = DType::bf16;
      for (I b = 0; b < s.B; ++b) s.cursor.push_back(b == s.B - 1 ? s.L - 1 : 2 * b);  // one flush, seven appends
      s.force.assign(static_cast<std::size_t>(s.B), 0);
    }
  }
  Call c = build_kda_call(s);
  (void)take_buckets();
  return c;
}

std::optional<OracleBenchRow> model_tier(const OpFuzzSpec& spec, const OracleBenchOptions& o) {
  const bool sparse = spec.op.rfind("sparse/", 0) == 0;
  if (!sparse && spec.op != "kda/recurrent" && spec.op != "kda/packed_decode" && spec.op != "kda/replayssm_decode")
    return std::nullopt;  // kda/chunk: its oracle is kda/recurrent's, measured above
  OracleBenchRow row;
  row.op = spec.op;
  row.tier = "model";
  for (int i = 0; i < o.model_cases; ++i) {
    const std::uint64_t seed = chunk_seed(o.seed, i);
    const Call c = sparse ? sparse_model_call(spec.op == "sparse/paged_prefill", seed) : kda_model_call(spec.op, seed);
    time_case(c, spec, row);
  }
  return row;
}

std::string per_min(double cases, double seconds) {
  return seconds > 0 ? fmt::format("{:.0f}", 60.0 * cases / seconds) : "-";
}

}  // namespace

std::vector<OracleBenchRow> run_oracle_bench(const OracleBenchOptions& o, std::ostream& progress) {
  // Once per process, not per case: the embedded diagnostics catalog is parsed the first time a check
  // fails (about 10 ms; a kernel-sized KDA decode call's whole oracle is 2-3 ms), which fell inside
  // whichever case came first. Parsed here, before any timing.
  (void)Catalog::embedded();
  auto tier_on = [&](const char* t) { return o.tiers.empty() || std::find(o.tiers.begin(), o.tiers.end(), t) != o.tiers.end(); };
  std::vector<OracleBenchRow> rows;
  for (const OpFuzzSpec& spec : op_specs()) {
    if (!selected(spec.op, o.ops)) continue;
    std::vector<OracleBenchRow> mine;
    if (tier_on("small")) mine.push_back(generated_tier(spec, false, o));
    if (tier_on("kernel")) mine.push_back(generated_tier(spec, true, o));
    if (tier_on("model"))
      if (auto r = model_tier(spec, o)) mine.push_back(*r);
    for (const auto& r : mine) {
      progress << fmt::format("  {:<22} {:<6} {:>4} cases  oracle {:.3f} s  faithful {:.3f} s  rule {:.3f} s (bound {:.3f} s)  wall {:.3f} s\n",
                              r.op, r.tier, r.cases, r.oracle, r.faithful, r.rule, r.bound, r.wall)
               << std::flush;
      rows.push_back(r);
    }
  }
  return rows;
}

void print_oracle_bench(const std::vector<OracleBenchRow>& rows, const std::vector<OracleBenchRow>& baseline,
                        const std::string& baseline_label, std::ostream& out) {
  out << fmt::format("{:<22} {:<6} {:>5} {:>9} {:>9} {:>9} {:>9} {:>10} {:>10} {:>9} | {:>10} {:>7} {:>10} {:>7}\n", "op",
                     "tier", "cases", "oracle", "faithful", "rule", "(bound)", "host", "oracle", "wall", "base host",
                     "ratio", "base orac.", "ratio");
  out << fmt::format("{:<22} {:<6} {:>5} {:>9} {:>9} {:>9} {:>9} {:>10} {:>10} {:>9} | {:>10} {:>7} {:>10} {:>7}\n", "", "",
                     "", "ms/case", "ms/case", "ms/case", "ms/case", "cases/min", "cases/min", "cases/min", "cases/min",
                     "", "cases/min", "");
  for (const auto& r : rows) {
    const double n = r.cases;
    auto ms = [&](double s) { return n > 0 ? fmt::format("{:.2f}", 1e3 * s / n) : std::string("-"); };
    const OracleBenchRow* b = nullptr;
    for (const auto& x : baseline)
      if (x.op == r.op && x.tier == r.tier) b = &x;
    std::string bh = "-", bo = "-", rh = "-", ro = "-";
    if (b != nullptr && b->cases > 0 && n > 0) {
      bh = per_min(b->cases, b->host());
      bo = per_min(b->cases, b->oracle);
      if (r.host() > 0) rh = fmt::format("{:.1f}x", (b->host() / b->cases) / (r.host() / n));
      if (r.oracle > 0) ro = fmt::format("{:.1f}x", (b->oracle / b->cases) / (r.oracle / n));
    }
    out << fmt::format("{:<22} {:<6} {:>5} {:>9} {:>9} {:>9} {:>9} {:>10} {:>10} {:>9} | {:>10} {:>7} {:>10} {:>7}\n", r.op,
                       r.tier, r.cases, ms(r.oracle), ms(r.faithful), ms(r.rule), ms(r.bound), per_min(n, r.host()),
                       per_min(n, r.oracle), per_min(n, r.wall), bh, rh, bo, ro);
  }
  out << "host = oracle + faithful + rule (the rule includes the a-priori bound), CPU time of the process; wall: the\n"
         "same parts in wall-clock time. base: "
      << baseline_label << "\n";
}

void print_oracle_bench_raw(const std::vector<OracleBenchRow>& rows, std::ostream& out) {
  for (const auto& r : rows)
    out << fmt::format("row {} {} {} {:.6f} {:.6f} {:.6f} {:.6f} {:.6f} {:016x} {:016x} {:016x}\n", r.op, r.tier, r.cases,
                       r.oracle, r.faithful, r.rule, r.bound, r.wall, r.oracle_digest, r.faithful_digest, r.bound_digest);
}

}  // namespace kparity::fuzz
