#pragma once
// The verbs of the kparity executable. Each returns the process exit status:
// 0 success, 1 a comparison against expected.* tensors failed, 2 bad input (usage, unknown entry,
// malformed file, contract violation), 3 an internal error.
#include <optional>
#include <string>
#include <vector>

namespace kparity::cli {

inline constexpr int kExitOk = 0;
inline constexpr int kExitMismatch = 1;
inline constexpr int kExitBadInput = 2;
inline constexpr int kExitInternal = 3;

struct ExplainOptions {
  std::vector<std::string> query;  // joined with spaces: a pasted message may arrive as several words
  bool json = false;
  bool sarif = false;
  bool markdown = false;
  bool list = false;
  std::string op;
  std::string tag;
  std::string catalog;  // override catalog file or directory
  std::string site;     // --site DIR: write the static site there
  bool force = false;   // --force: let --site replace a folder that is not a previous site
};

struct RunOptions {
  std::string dump;
  std::string precision = "oracle";
  std::string out_dtype;  // empty: keep the dump's dtypes
  std::string backend = "reference";
  std::string output;     // empty: <dump stem>.result.safetensors beside the dump
  std::optional<double> atol, rtol;  // override the documented tolerance for every tensor
};

// `kparity fuzz` (cli/fuzz_cmd.cpp; only when the fuzz harness is built). Exit status: 0 every
// property held (or every corpus dump replayed), 1 one did not, 2 bad input, 3 internal error.
struct FuzzOptions {
  std::vector<std::string> ops;
  std::string backend = "all";
  std::optional<int> cases;
  std::optional<double> seconds;  // --time
  std::string seed;               // decimal or 0x hex; empty: the fixed default seed
  std::string report;
  std::string corpus = "fuzz/corpus";
  std::string property;
  std::string replay;
  int max_size = 100;
  bool no_shrink = false;
  bool list = false;
  bool self_test = false;
  std::optional<int> jobs;  // empty: the machine's hardware threads
  std::string shard;        // "i/n" or "auto"; empty: the whole campaign
};

// `kparity fuzz merge a.json b.json ... [-o all.json]`: shard reports into one. Exit status as the
// campaign's: 0 every property held, 1 one did not, 2 bad input.
struct FuzzMergeOptions {
  std::vector<std::string> reports;
  std::string output;
};

// The default campaign's wall-clock budget when neither --cases nor --time is given: the README's
// main job, sized to finish in about two minutes on two cores.
inline constexpr double kDefaultFuzzSeconds = 90.0;

int explain(const ExplainOptions& o);
int run(const RunOptions& o);
int fuzz(const FuzzOptions& o);
int fuzz_merge(const FuzzMergeOptions& o);

}  // namespace kparity::cli
