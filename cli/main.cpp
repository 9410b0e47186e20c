// kparity: explain catalog entries and replay op calls from safetensors dumps.
#include <cstdio>
#include <exception>

#include <CLI/CLI.hpp>

#include "commands.hpp"

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

  RunOptions ro;
  auto* run_cmd = app.add_subcommand("run", "Validate and run one op call stored in a safetensors dump");
  run_cmd->add_option("dump", ro.dump, "The dump (.safetensors); see README, 'Replaying a call'")->required();
  run_cmd->add_option("--precision", ro.precision, "oracle (fp64, the truth) or faithful (upstream rounding points)")
      ->check(CLI::IsMember({"oracle", "faithful"}));
  run_cmd->add_option("--out-dtype", ro.out_dtype, "Write outputs as f32 (oracle: computed without bf16/f16 rounding)")
      ->check(CLI::IsMember({"f32", "f64"}));
  run_cmd->add_option("--backend", ro.backend, "reference (scalar host reference)");
  run_cmd->add_option("-o,--output", ro.output, "Result file (default: <dump>.result.safetensors)");
  run_cmd->add_option("--atol", ro.atol, "Absolute tolerance for every expected.* comparison (needs --rtol)");
  run_cmd->add_option("--rtol", ro.rtol, "Relative tolerance for every expected.* comparison (needs --atol)");

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int rc = app.exit(e);
    return rc == 0 ? kExitOk : kExitBadInput;
  }
  try {
    if (explain_cmd->parsed()) return explain(ex);
    if (run_cmd->parsed()) return run(ro);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "kparity: internal error: %s\n", e.what());
    return kExitInternal;
  }
  return kExitBadInput;
}
