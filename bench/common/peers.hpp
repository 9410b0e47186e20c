#pragma once
// Peer figures measured in the same device call (bench/peers/run_peers.py writes them to the JSON
// file named by KPARITY_PEERS_JSON or --peers FILE). Benchmarks print a peer next to a kparity figure
// only from here: never from a constant. Absent file, key or field: "not measured in this run".
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

namespace kparity::bench {

class PeerFigures {
 public:
  // From `path`, or from KPARITY_PEERS_JSON when `path` is empty. Never throws: a missing or
  // malformed file gives an empty set whose source() says why.
  static PeerFigures load(const std::string& path = {});

  // figures[key][field] (e.g. "kda/replayssm_decode B=1 HV=32", "us"), when measured.
  std::optional<double> get(const std::string& key, const std::string& field = "us") const;
  // The peer's name and timing method for a key ("" when absent).
  std::string describe(const std::string& key) const;
  // One line for the benchmark's header: where the peer figures come from, or why there are none.
  const std::string& source() const { return source_; }
  bool any() const { return !figures_.empty(); }

 private:
  nlohmann::json figures_ = nlohmann::json::object();
  std::string source_;
};

// The benchmarks' command line: [table.md] [--peers peers.json]. False (after printing `usage`) on
// anything else.
bool parse_bench_args(int argc, char** argv, std::string& table_md, std::string& peers_json, const char* usage);

// "12.6" (the value with `digits` decimals) or "not measured in this run".
std::string peer_cell(const std::optional<double>& v, int digits);
// "1.79x" (peer / ours, >1 means kparity is faster) or "-" when the peer was not measured.
std::string speedup_cell(const std::optional<double>& peer, double ours);

}  // namespace kparity::bench
