#pragma once
// A small hand-written catalog for engine tests, so they do not depend on the real entries (which
// other changes add and edit). Installed with ScopedCatalog for make_diagnostic and the renderers.
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "kparity/diagnostics/catalog.hpp"

namespace kparity::test {

inline nlohmann::json synthetic_record(std::string id, std::string slug, std::string tmpl, std::string pattern,
                                       std::string message) {
  return {{"id", std::move(id)},
          {"repo", "sgl-project/sglang"},
          {"slug", std::move(slug)},
          {"op", "kda/replayssm_decode"},
          {"argument", "x"},
          {"checkOrder", 0},
          {"checkRef", "kda.md C.1 #0"},
          {"severity", "error"},
          {"origin", "upstream"},
          {"status", "active"},
          {"errorClass", "ValueError"},
          {"summary", "A summary."},
          {"errorMessage", std::move(message)},
          {"messagePattern", std::move(pattern)},
          {"messageTemplate", std::move(tmpl)},
          {"args", nlohmann::json::array()},
          {"filePath", "python/pkg/mod.py"},
          {"lineNumber", 744},
          {"analyzedSha", "0132848349585cfe6aae51c4941cbae872505f8a"},
          {"helpUri", "https://github.com/sgl-project/sglang/blob/0132848349585cfe6aae51c4941cbae872505f8a/python/pkg/mod.py#L744"},
          {"documentation", "Why the rule exists."},
          {"triggerScenarios", "A call with the wrong thing."},
          {"commonSituations", "Allocating it wrongly."},
          {"solutions", {"Allocate it right.", "Check it early."}},
          {"exampleFix", "x = right()"},
          {"handlingStrategy", "fix-the-allocation"},
          {"preventionTips", {"Keep one allocator."}},
          {"tags", {"dtype"}}};
}

inline std::vector<std::pair<std::string, std::string>> synthetic_texts() {
  std::vector<nlohmann::json> recs;
  recs.push_back(synthetic_record("aaaaaaaaaaaaaaa1", "kda-test-g-cache-dtype", "`g_cache` must have dtype torch.float32.",
                                  R"(`g_cache` must have dtype torch\.float32\.)", "`g_cache` must have dtype torch.float32."));
  recs.back()["checkOrder"] = 10;
  recs.back()["related"] = {"aaaaaaaaaaaaaaa2"};
  recs.push_back(synthetic_record("aaaaaaaaaaaaaaa2", "kda-test-write-pos-shape", "`write_pos` must have shape {shape}.",
                                  R"(`write_pos` must have shape \(\d+,\)\.)", "`write_pos` must have shape (2,)."));
  recs.back()["checkOrder"] = 20;
  recs.back()["args"] = {{{"name", "shape"}, {"doc", "(B,) as a Python tuple"}}};
  recs.back()["tags"] = {"shape", "ring"};
  // A vaguer pattern that also matches write_pos messages: the more specific entry must win.
  recs.push_back(synthetic_record("aaaaaaaaaaaaaaa3", "kda-test-any-shape", "`{name}` must have shape {shape}.",
                                  R"(`\w+` must have shape .*)", "`x` must have shape (1,)."));
  recs.back()["checkOrder"] = 30;
  recs.back()["args"] = {{{"name", "name"}, {"doc", "argument"}}, {{"name", "shape"}, {"doc", "shape"}}};
  // Undocumented kparity warning with literal braces in its template.
  auto w = synthetic_record("aaaaaaaaaaaaaaa4", "kda-test-index-warning", "index {{i}}={index} of {arg} is odd {{}}",
                            R"(index \{i\}=\d+ of \w+ is odd \{\})", "index {i}=3 of write_pos is odd {}");
  w["severity"] = "warning";
  w["origin"] = "kparity";
  w["repo"] = "kparity";
  w["filePath"] = nullptr;
  w["lineNumber"] = nullptr;
  w["analyzedSha"] = nullptr;
  w["helpUri"] = nullptr;
  w["documentation"] = "";
  w["checkOrder"] = 40;
  w["args"] = {{{"name", "arg"}, {"doc", "argument"}}, {{"name", "index"}, {"doc", "value"}}};
  recs.push_back(w);
  auto r = synthetic_record("bbbbbbbbbbbbbbb1", "sparse-test-requires-cuda", "Triton sparse_attn_v4_paged_prefill requires CUDA/HIP tensors",
                            R"(Triton sparse_attn_v4_paged_prefill requires CUDA/HIP tensors)",
                            "Triton sparse_attn_v4_paged_prefill requires CUDA/HIP tensors");
  r["op"] = "sparse/paged_prefill";
  r["errorClass"] = "RuntimeError";
  r["argument"] = "q";
  recs.push_back(r);
  std::vector<std::pair<std::string, std::string>> texts;
  for (const auto& rec : recs) texts.emplace_back("test/" + rec["slug"].get<std::string>() + ".json", rec.dump(2));
  return texts;
}

inline std::shared_ptr<const Catalog> synthetic_catalog() {
  static const auto c = std::make_shared<const Catalog>(Catalog::from_texts(synthetic_texts()));
  return c;
}

// Installs the synthetic catalog for one test.
class ScopedCatalog {
 public:
  explicit ScopedCatalog(std::shared_ptr<const Catalog> c = synthetic_catalog()) { use_catalog(std::move(c)); }
  ~ScopedCatalog() { use_catalog(nullptr); }
  ScopedCatalog(const ScopedCatalog&) = delete;
  ScopedCatalog& operator=(const ScopedCatalog&) = delete;
};

}  // namespace kparity::test
