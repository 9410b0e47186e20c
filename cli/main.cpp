// kparity: explain catalog entries, replay op calls from safetensors dumps, fuzz.
#include <cstdio>
#include <exception>

#include <CLI/CLI.hpp>

#include "commands.hpp"
#ifdef KPARITY_HAVE_FUZZ
#include "fuzz_bench_oracle.hpp"
#include "fuzz_impl_campaign.hpp"
#include "kparity/fuzz/campaign/selftest.hpp"
#endif

#ifndef KPARITY_VERSION
#define KPARITY_VERSION "unknown"
#endif

int main(int argc, char** argv) {
  using namespace kparity::cli;
  CLI::App app{"kparity: contract diagnostics and scalar references for KDA and DeepSeek-V4 sparse attention"};
  app.set_version_flag("--version", std::string("kparity ") + KPARITY_VERSION);
  app.require_subcommand(1);

  ExplainOptions ex;
  auto* explain_cmd = app.add_subcommand("explain", "Print a catalog entry, or list, export and index the catalog");
  explain_cmd->add_option("query", ex.query, "Catalog id, slug, or a pasted error message (with --list: id/slug prefix)");
  explain_cmd->add_flag("--json", ex.json, "The entry (or, without a query, every entry) as JSON");
  explain_cmd->add_flag("--sarif", ex.sarif, "A SARIF 2.1.0 log whose rules[] are the selected entries");
  explain_cmd->add_flag("--markdown", ex.markdown, "A markdown error index of the selected entries");
  explain_cmd->add_flag("--list", ex.list, "One line per entry: id, slug, summary");
  explain_cmd->add_option("--op", ex.op, "Only entries of this op (exact, or a prefix such as kda/)");
  explain_cmd->add_option("--tag", ex.tag, "Only entries with this tag");
  explain_cmd->add_option("--catalog", ex.catalog, "Use this catalog file or directory instead of the embedded one");
  explain_cmd->add_option("--site", ex.site, "Write the catalog as a static website into this folder (see README)");
  explain_cmd->add_flag("--force", ex.force, "With --site: replace a non-empty folder that is not a previous kparity site");

  RunOptions ro;
  auto* run_cmd = app.add_subcommand("run", "Validate and run one op call stored in a safetensors dump");
  run_cmd->add_option("dump", ro.dump, "The dump (.safetensors); see README, 'Replaying a call'")->required();
  run_cmd->add_option("--precision", ro.precision, "oracle (fp64, the truth) or faithful (upstream rounding points)")
      ->check(CLI::IsMember({"oracle", "faithful"}));
  run_cmd->add_option("--out-dtype", ro.out_dtype,
                      "Write outputs as f32 or f64 (oracle: stored once in that dtype; f64 is not rounded at all)")
      ->check(CLI::IsMember({"f32", "f64"}));
  run_cmd->add_option("--backend", ro.backend,
                      "reference (scalar host reference), cuda (kparity's kernel, judged against the oracle) or all")
      ->check(CLI::IsMember({"reference", "cuda", "all"}));
  run_cmd->add_option("-o,--output", ro.output,
                      "Result file (default: <dump>.result.safetensors; with --backend all, one per backend: <stem>.<backend>.safetensors)");
  run_cmd->add_option("--atol", ro.atol, "Absolute tolerance for every expected.* comparison (needs --rtol)");
  run_cmd->add_option("--rtol", ro.rtol, "Relative tolerance for every expected.* comparison (needs --atol)");

#ifdef KPARITY_HAVE_FUZZ
  FuzzOptions fz;
  auto* fuzz_cmd = app.add_subcommand(
      "fuzz", "Property-based fuzzing: the default campaign over every op and backend, repros, corpus replay");
  fuzz_cmd->add_option("--op", fz.ops, "Only properties about these ops (kda/packed_decode, ...) or families (kda, sparse)")
      ->take_all();
  fuzz_cmd->add_option("--backend", fz.backend, "reference (CPU properties), cuda (kernel properties), launcher (kernel launchers on host memory, no device), all, or control (the controls: correct fp32 fake kernels in other accumulation orders, which the rule must pass; control/<reversed|pairwise|tile16|fma|fp64|fma-exponent> for one), or selftest (the self-test's planted bugs as wrong kernels without a device, whose findings the campaign shrinks and explains; selftest/<bug> for one)")
      ->check(CLI::IsMember([] {
        std::vector<std::string> v = {"reference", "cuda", "launcher", "all", "control", "control/reversed",
                                      "control/pairwise", "control/tile16", "control/fma", "control/fp64",
                                      "control/fma-exponent", "selftest"};
        for (const auto& b : kparity::fuzz::planted_bugs()) v.push_back(b.backend.name);
        return v;
      }()));
  auto* cases = fuzz_cmd->add_option("--cases", fz.cases, "Passing cases per property")->check(CLI::PositiveNumber);
  auto* time = fuzz_cmd->add_option("--time", fz.seconds, "Wall-clock budget in seconds, split across the properties")
                   ->check(CLI::PositiveNumber);
  cases->excludes(time);
  fuzz_cmd->add_option("--seed", fz.seed, "Campaign seed, decimal or 0x hex (default: fixed)");
  fuzz_cmd->add_option("--max-size", fz.max_size, "RapidCheck's final size parameter (default 100)")
      ->check(CLI::PositiveNumber);
  fuzz_cmd->add_flag("--no-shrink", fz.no_shrink, "Report the first failing case as drawn");
  fuzz_cmd->add_option("--report", fz.report, "Write the JSON report here");
  fuzz_cmd->add_option("--corpus", fz.corpus, "Save shrunk failing calls here (default fuzz/corpus)");
  fuzz_cmd->add_option("--property", fz.property, "Run exactly this property (see --list)");
  fuzz_cmd->add_flag("--list", fz.list, "List the properties (kind, backend, op, name) and exit");
  fuzz_cmd->add_flag("--self-test", fz.self_test, "Plant known bugs in a copy of the reference; every one must be caught");
  fuzz_cmd->add_option("--replay", fz.replay, "Replay the corpus dumps in this directory (or this one dump) as regression cases");
  fuzz_cmd->add_option("--jobs", fz.jobs, "Worker processes (default: the machine's hardware threads); results do not depend on it")
      ->check(CLI::PositiveNumber);
  fuzz_cmd->add_option("--shard", fz.shard, "Run shard i/n of the campaign, or auto (Slurm array or Kubernetes Indexed Job)");
  FuzzMergeOptions fm;
  auto* merge_cmd = fuzz_cmd->add_subcommand("merge", "Merge the --report files of a campaign's shards into one report");
  merge_cmd->add_option("reports", fm.reports, "The shards' report files")->required();
  merge_cmd->add_option("-o,--output", fm.output, "Write the merged report here");
  fuzz_cmd->add_option("--impl", fz.impl, "Fuzz this implementation plugin (a shared library written to kparity/impl_abi.h) against the references");
  add_impl_campaign_options(*fuzz_cmd);  // --preset, --max-findings, --known (fuzz_impl_campaign.hpp)
  add_bench_oracle_option(*fuzz_cmd);    // --bench-oracle (fuzz_bench_oracle.hpp)
#endif

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int rc = app.exit(e);
    return rc == 0 ? kExitOk : kExitBadInput;
  }
  try {
    if (explain_cmd->parsed()) return explain(ex);
    if (run_cmd->parsed()) return run(ro);
#ifdef KPARITY_HAVE_FUZZ
    if (merge_cmd->parsed()) return fuzz_merge(fm);
    if (fuzz_cmd->parsed()) return bench_oracle_requested() ? fuzz_bench_oracle(fz) : fuzz(fz);
#endif
  } catch (const std::exception& e) {
    std::fprintf(stderr, "kparity: internal error: %s\n", e.what());
    return kExitInternal;
  }
  return kExitBadInput;
}
