// kda_chunk_accuracy: the accuracy comparison issue 30 asks for. "The kernel's errors must be no
// larger than fla chunk_kda's on the same calls": for each kda/chunk dump whose expected.* are what
// fla's chunk_kda returned (captured on the GPU by bench/fuzz/upstream.py with KPARITY_CAPTURE_DIR;
// twelve in tests/data/fla_chunk_kda), measure against kparity's oracle
//   fla      the captured expected.out / expected.final_state;
//   kparity  kparity's CUDA kda/chunk kernel on the same inputs (--impl cuda, the default), or a
//            faithful reference under a precision profile standing in for it (--impl fla-chunk,
//            kparity-chunk, faithful: what makes the tool testable without a GPU).
// The oracle: kparity's fp64 reference, its written bf16/f16 tensors widened to fp32 (fuzz's
// run_oracle, as the differential rule runs it), so the outputs' own rounding to their dtype counts
// as error for both sides alike.
//
// Per call and tensor (out, final_state), over the elements where the oracle is finite:
//   max|e|   max |x - o|
//   rel      max |x - o| / max |o|: normwise, the largest error over the tensor's largest oracle
//            magnitude (not elementwise: near-zero entries would dominate)
//   rms      sqrt(mean (x - o)^2)
// and a count of elements whose class differs (x non-finite where o is finite, or another
// non-finite class). A call counts as "kparity <= fla" when kparity's max|e| is at most fla's on
// every tensor compared and no class differs more than fla's. Totals: the largest max|e| and rel,
// and the rms pooled over all elements.
//
//   kda_chunk_accuracy [--impl cuda|PROFILE] [--json FILE] [--check-ratio R] DUMP_OR_DIR...
//
// --check-ratio R (the ctest): exit 1 unless, on every call and tensor where fla erred, kparity's
// max|e| is within a factor R of fla's (the fla-chunk model standing in for the kernel must err like
// fla does). Exit 0 otherwise, also when the kernel cannot run (not built, no device: said per call
// and at the end); 1 when a kernel run fails.
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <span>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "kparity/core/tensor.hpp"
#include "kparity/fuzz/backends/backend.hpp"
#include "kparity/fuzz/backends/reference.hpp"
#include "kparity/fuzz/corpus/corpus.hpp"
#include "kparity/reference/precision_profile.hpp"

#ifdef KPARITY_ACCURACY_KERNEL
#include "chunk_accuracy_cuda.hpp"
#endif

namespace {

using namespace kparity;
using reference::PrecisionProfile;

struct Err {
  double max_abs = 0, max_ref = 0, sum_sq = 0;
  std::int64_t n = 0, class_mismatch = 0;
  double rel() const { return max_ref > 0 ? max_abs / max_ref : (max_abs > 0 ? INFINITY : 0.0); }
  double rms() const { return n ? std::sqrt(sum_sq / static_cast<double>(n)) : 0.0; }
  void pool(const Err& e) {
    max_abs = std::max(max_abs, e.max_abs), max_ref = std::max(max_ref, e.max_ref);
    sum_sq += e.sum_sq, n += e.n, class_mismatch += e.class_mismatch;
  }
};

int fp_class(double x) { return std::isnan(x) ? 1 : (std::isinf(x) ? (x > 0 ? 2 : 3) : 0); }

Err error_of(const TensorView& got, const TensorView& oracle) {
  Err e;
  if (got.shape() != oracle.shape()) {
    e.class_mismatch = 1, e.max_abs = INFINITY;
    return e;
  }
  for_each_element(oracle, [&](std::span<const std::int64_t> i, std::int64_t) {
    const double x = got.load(i), o = oracle.load(i);
    if (fp_class(x) != fp_class(o)) ++e.class_mismatch;
    if (!std::isfinite(o)) return;
    const double d = std::isfinite(x) ? std::fabs(x - o) : INFINITY;
    e.max_abs = std::max(e.max_abs, d), e.max_ref = std::max(e.max_ref, std::fabs(o));
    e.sum_sq += d * d, ++e.n;
  });
  return e;
}

struct Side {
  std::map<std::string, Err> errs;  // by tensor
  std::string skipped;              // why it did not run ("" when it ran)
};

struct Options {
  std::string impl = "cuda";
  std::string json;
  double check_ratio = 0;
  std::vector<std::string> inputs;
};

std::optional<Options> parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const bool has_value = i + 1 < argc;
    if (a == "--impl" && has_value) o.impl = argv[++i];
    else if (a == "--json" && has_value) o.json = argv[++i];
    else if (a == "--check-ratio" && has_value) o.check_ratio = std::atof(argv[++i]);
    else if (a.rfind("--", 0) == 0) return std::nullopt;
    else o.inputs.push_back(a);
  }
  if (o.inputs.empty() || (o.impl != "cuda" && !reference::parse_profile(o.impl))) return std::nullopt;
  return o;
}

// The candidate implementation: kparity's CUDA kernel (through the fuzz harness's CUDA backend once
// it lists kda/chunk, else straight through the launcher) or a faithful profile's model.
class Candidate {
 public:
  explicit Candidate(const std::string& impl) : impl_(impl) {
    if (impl != "cuda") return;
    std::string why;
    for (auto& b : fuzz::cuda_backends(why))
      if (b.implements("kda/chunk")) cuda_ = std::move(b);
    if (cuda_) return;
#ifdef KPARITY_ACCURACY_KERNEL
    not_built_ = bench::chunk_kernel_unavailable();
    direct_ = not_built_.empty();
#else
    not_built_ = "this build has no CUDA kernels";
#endif
  }
  const std::string& not_built() const { return not_built_; }

  // The written tensors of `call` run on the candidate; throws fuzz::BackendUnsupported for a call
  // the kernel refuses as not implemented.
  fuzz::Call run(const fuzz::Call& call) const {
    if (cuda_) return fuzz::run_backend(call, *cuda_);
#ifdef KPARITY_ACCURACY_KERNEL
    if (direct_) return bench::run_chunk_kernel(call);
#endif
    const reference::PrecisionProfileScope scope(*reference::parse_profile(impl_));
    return fuzz::run_faithful(call);
  }

 private:
  std::string impl_;
  std::optional<fuzz::Backend> cuda_;
  bool direct_ = false;
  std::string not_built_;
};

std::string stem(const std::string& path) {
  std::string s = path.substr(path.find_last_of('/') + 1);
  const auto dot = s.find(".safetensors");
  return dot == std::string::npos ? s : s.substr(0, dot);
}

void print_row(const std::string& call, const std::string& tensor, const Err& f, const Side& k) {
  std::printf("%-34s %-12s %10.3e %10.3e %9.2e %9.2e %9.2e %9.2e", call.c_str(), tensor.c_str(), f.max_abs,
              k.skipped.empty() ? k.errs.at(tensor).max_abs : NAN, f.rel(), k.skipped.empty() ? k.errs.at(tensor).rel() : NAN,
              f.rms(), k.skipped.empty() ? k.errs.at(tensor).rms() : NAN);
  if (!k.skipped.empty()) {
    std::printf("  %s\n", k.skipped.c_str());
    return;
  }
  const Err& e = k.errs.at(tensor);
  std::printf("  %s%s\n", e.max_abs <= f.max_abs ? "<=" : ">", e.class_mismatch || f.class_mismatch
              ? (" class mismatches fla " + std::to_string(f.class_mismatch) + " kparity " + std::to_string(e.class_mismatch)).c_str() : "");
}

// The keys of `m` among kda/chunk's written tensors, in the op's order (out, then final_state).
template <class M>
std::vector<std::string> written_order(const M& m) {
  std::vector<std::string> names;
  for (const char* n : {"out", "final_state"})
    if (m.count(n)) names.push_back(n);
  return names;
}

nlohmann::json to_json(const Err& e) {
  return {{"max_abs", e.max_abs}, {"rel", e.rel()}, {"rms", e.rms()}, {"n", e.n}, {"class_mismatch", e.class_mismatch}};
}

}  // namespace

int main(int argc, char** argv) {
  const auto opt = parse(argc, argv);
  if (!opt) {
    std::fprintf(stderr, "usage: kda_chunk_accuracy [--impl cuda|faithful|fla-chunk|kparity-chunk] [--json FILE] "
                         "[--check-ratio R] DUMP_OR_DIR...\n");
    return 2;
  }
  const Candidate cand(opt->impl);
  std::printf("kda/chunk accuracy against the oracle: fla = captured chunk_kda outputs, kparity = %s%s\n",
              opt->impl.c_str(), cand.not_built().empty() ? "" : (" (" + cand.not_built() + ")").c_str());
  std::printf("rel = max|x - o| / max|o| per tensor; rms over the elements where the oracle is finite\n");
  std::printf("%-34s %-12s %10s %10s %9s %9s %9s %9s\n", "call", "tensor", "fla max|e|", "kp max|e|", "fla rel",
              "kp rel", "fla rms", "kp rms");
  std::map<std::string, Err> fla_total, kp_total;
  std::map<std::string, int> tensor_le, tensor_n;
  int calls = 0, compared = 0, kp_le = 0, failures = 0, not_run = 0, refused = 0;
  nlohmann::json report = nlohmann::json::array();
  for (const auto& input : opt->inputs)
    for (const auto& file : fuzz::corpus_files(input)) {
      std::map<std::string, Tensor> expected;
      fuzz::ExpectedOrigin origin{};
      fuzz::Call call = fuzz::load_call(file, &expected, &origin);
      // Only upstream's outputs: a fuzzer's saved case holds the oracle's as expected.*.
      if (call.op != "kda/chunk" || !expected.count("out") || origin == fuzz::ExpectedOrigin::oracle) continue;
      fuzz::Call oracle;
      try {
        try {
          oracle = fuzz::run_oracle(call);
        } catch (const std::exception&) {  // special values the strict contract refuses: data checks off
          call.options.deep = false;
          oracle = fuzz::run_oracle(call);
        }
      } catch (const std::exception& e) {  // a call kparity's contract refuses has no oracle to judge by
        std::printf("%-34s skipped: the oracle refuses the call: %s\n", stem(file).c_str(), e.what());
        ++refused;
        continue;
      }
      ++calls;
      Side kp;
      if (!cand.not_built().empty()) {
        kp.skipped = cand.not_built();
      } else {
        try {
          const fuzz::Call got = cand.run(call);
          for (const auto& [name, want] : expected) kp.errs[name] = error_of(got.at(name).view(), oracle.at(name).view());
        } catch (const fuzz::BackendUnsupported& e) {
          kp.skipped = std::string("kernel not built or call unsupported: ") + e.what();
        } catch (const std::exception& e) {
          kp.skipped = std::string("kernel run failed: ") + e.what();
          ++failures;
        }
      }
      nlohmann::json row = {{"call", stem(file)}, {"file", file}};
      bool le = true;
      for (const auto& name : written_order(expected)) {
        const Tensor& want = expected.at(name);
        const Err f = error_of(want.view(), oracle.at(name).view());
        fla_total[name].pool(f);
        print_row(stem(file), name, f, kp);
        row["fla"][name] = to_json(f);
        if (!kp.skipped.empty()) continue;
        const Err& e = kp.errs.at(name);
        kp_total[name].pool(e);
        row["kparity"][name] = to_json(e);
        const bool t_le = e.max_abs <= f.max_abs && e.class_mismatch <= f.class_mismatch;
        le = le && t_le, tensor_le[name] += t_le, ++tensor_n[name];
        if (opt->check_ratio > 0 && f.max_abs > 0 &&
            !(e.max_abs <= f.max_abs * opt->check_ratio && e.max_abs >= f.max_abs / opt->check_ratio)) {
          std::printf("CHECK %s %s: kparity max|e| %.3e is not within %gx of fla's %.3e\n", stem(file).c_str(),
                      name.c_str(), e.max_abs, opt->check_ratio, f.max_abs);
          ++failures;
        }
      }
      if (kp.skipped.empty()) ++compared, kp_le += le;
      else ++not_run, row["skipped"] = kp.skipped;
      row["kparity_le_fla"] = kp.skipped.empty() ? nlohmann::json(le) : nlohmann::json(nullptr);
      report.push_back(row);
    }
  for (const auto& name : written_order(fla_total)) {
    const Err& f = fla_total.at(name);
    Side k;
    if (kp_total.count(name)) k.errs[name] = kp_total.at(name);
    else k.skipped = cand.not_built().empty() ? "kernel did not run" : cand.not_built();
    print_row("TOTAL (" + std::to_string(calls) + " calls)", name, f, k);
  }
  for (const auto& name : written_order(tensor_n)) std::printf("%s: kparity <= fla on %d of %d calls\n", name.c_str(), tensor_le[name],
                                                             tensor_n[name]);
  if (not_run && compared) std::printf("kparity did not run on %d calls\n", not_run);
  if (refused) std::printf("%d dumps skipped: the oracle refuses them\n", refused);
  // Last, so that it is the line a log's tail shows (scripts/gpu-wave.sh's phase note).
  if (compared) std::printf("kparity <= fla on %d of %d calls\n", kp_le, compared);
  else if (calls) std::printf("kparity <= fla: %s (%d calls measured for fla only)\n",
                   cand.not_built().empty() ? "kernel did not run" : cand.not_built().c_str(), calls);
  if (!opt->json.empty()) {
    std::ofstream(opt->json) << nlohmann::json{{"impl", opt->impl}, {"calls", report}, {"compared", compared},
                                               {"kparity_le_fla", kp_le}}.dump(1) << "\n";
  }
  if (calls == 0) {
    std::fprintf(stderr, "kda_chunk_accuracy: no kda/chunk dump with expected.out among the inputs\n");
    return 1;
  }
  return failures ? 1 : 0;
}
