#include "common/peers.hpp"

#include <cstdio>
#include <cstdlib>
#include <fstream>

namespace kparity::bench {

PeerFigures PeerFigures::load(const std::string& path) {
  PeerFigures p;
  std::string file = path;
  if (file.empty()) {
    const char* env = std::getenv("KPARITY_PEERS_JSON");
    if (env == nullptr || *env == '\0') {
      p.source_ = "peers: not measured in this run (KPARITY_PEERS_JSON unset; bench/peers/run_peers.py writes it)";
      return p;
    }
    file = env;
  }
  std::ifstream in(file);
  if (!in) {
    p.source_ = "peers: not measured in this run (cannot read " + file + ")";
    return p;
  }
  try {
    const nlohmann::json j = nlohmann::json::parse(in);
    if (j.value("schema", "") != "kparity-peers/1") throw std::runtime_error("schema is not kparity-peers/1");
    p.figures_ = j.at("figures");
    std::string failed;
    for (const auto& r : j.value("runs", nlohmann::json::array()))
      if (!r.value("reason", std::string()).empty()) failed += (failed.empty() ? "" : ", ") + r.value("name", std::string("?"));
    p.source_ = "peers: measured " + j.value("measured_at", std::string("(no time)")) + " on " +
                (j.contains("gpu") && j["gpu"].is_string() ? j["gpu"].get<std::string>() : std::string("(GPU unnamed)")) +
                " by bench/peers/run_peers.py (" + file + ")" + (failed.empty() ? "" : "; not measured: " + failed);
  } catch (const std::exception& e) {
    p.figures_ = nlohmann::json::object();
    p.source_ = "peers: not measured in this run (" + file + ": " + e.what() + ")";
  }
  return p;
}

std::optional<double> PeerFigures::get(const std::string& key, const std::string& field) const {
  const auto it = figures_.find(key);
  if (it == figures_.end() || !it->is_object()) return std::nullopt;
  const auto f = it->find(field);
  if (f == it->end() || !f->is_number()) return std::nullopt;
  return f->get<double>();
}

std::string PeerFigures::describe(const std::string& key) const {
  const auto it = figures_.find(key);
  if (it == figures_.end() || !it->is_object()) return "";
  return it->value("peer", std::string()) + ", " + it->value("timing", std::string());
}

bool parse_bench_args(int argc, char** argv, std::string& table_md, std::string& peers_json, const char* usage) {
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--peers" && i + 1 < argc) {
      peers_json = argv[++i];
    } else if (table_md.empty() && a.rfind("--", 0) != 0) {
      table_md = a;
    } else {
      std::fprintf(stderr, "usage: %s\n", usage);
      return false;
    }
  }
  return true;
}

std::string peer_cell(const std::optional<double>& v, int digits) {
  if (!v) return "not measured in this run";
  char b[64];
  std::snprintf(b, sizeof b, "%.*f", digits, *v);
  return b;
}

std::string speedup_cell(const std::optional<double>& peer, double ours) {
  if (!peer || !(ours > 0)) return "-";
  char b[64];
  std::snprintf(b, sizeof b, "%.2fx", *peer / ours);
  return b;
}

}  // namespace kparity::bench
