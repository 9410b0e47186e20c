// Shape pins (pins.hpp): the text form and its parser.
#include "kparity/fuzz/generators/pins.hpp"

#include <charconv>
#include <stdexcept>

namespace kparity::fuzz {
namespace {

using I = std::int64_t;

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

std::vector<std::string_view> split(std::string_view s, char sep) {
  std::vector<std::string_view> out;
  for (std::size_t start = 0;;) {
    const std::size_t at = s.find(sep, start);
    out.push_back(trim(s.substr(start, at == std::string_view::npos ? std::string_view::npos : at - start)));
    if (at == std::string_view::npos) return out;
    start = at + 1;
  }
}

struct Key {
  const char* name;
  bool size;  // a size (int list) or a dtype list
  std::vector<I> ShapePins::*sizes;
  std::vector<DType> ShapePins::*dtypes;
};

const std::vector<Key>& keys(std::string_view family) {
  static const std::vector<Key> sparse = {{"D", true, &ShapePins::D, nullptr},
                                          {"H", true, &ShapePins::H, nullptr},
                                          {"dtype", false, nullptr, &ShapePins::dtype},
                                          {"sink", false, nullptr, &ShapePins::sink}};
  static const std::vector<Key> kda = {{"H", true, &ShapePins::H, nullptr},          {"HV", true, &ShapePins::HV, nullptr},
                                       {"K", true, &ShapePins::K, nullptr},          {"V", true, &ShapePins::V, nullptr},
                                       {"L", true, &ShapePins::L, nullptr},          {"act", false, nullptr, &ShapePins::act},
                                       {"state", false, nullptr, &ShapePins::state}, {"params", false, nullptr, &ShapePins::params},
                                       {"ring", false, nullptr, &ShapePins::ring}};
  static const std::vector<Key> none;
  return family == "sparse" ? sparse : family == "kda" ? kda : none;
}

std::string key_names(std::string_view family) {
  std::string out;
  for (const Key& k : keys(family)) out += (out.empty() ? "" : ", ") + std::string(k.name);
  return out + ", layout";
}

// The dtypes each knob can take (what the kernels and the generators accept).
bool dtype_allowed(std::string_view key, DType t) {
  if (key == "sink" || key == "params" || key == "state" || key == "ring" || key == "act")
    return t == DType::f32 || t == DType::f16 || t == DType::bf16;
  return t == DType::f16 || t == DType::bf16;  // sparse dtype: q, KV and out are 16-bit
}

}  // namespace

bool ShapePins::empty() const {
  if (compact) return false;
  for (const Key& k : keys(family))
    if (k.size ? !(this->*k.sizes).empty() : !(this->*k.dtypes).empty()) return false;
  return true;
}

std::string ShapePins::text() const {
  std::string out;
  for (const Key& k : keys(family)) {
    std::string values;
    if (k.size)
      for (I v : this->*k.sizes) values += (values.empty() ? "" : "|") + std::to_string(v);
    else
      for (DType t : this->*k.dtypes) values += (values.empty() ? "" : "|") + std::string(dtype_name(t));
    if (!values.empty()) out += (out.empty() ? "" : ",") + std::string(k.name) + "=" + values;
  }
  if (compact) out += std::string(out.empty() ? "" : ",") + "layout=compact";
  return out;
}

ShapePins parse_shape_pins(std::string_view text, std::string_view op) {
  ShapePins p;
  p.family = std::string(op.substr(0, op.find('/')));
  if (keys(p.family).empty()) throw std::invalid_argument("pins: no pins for " + std::string(op));
  const std::string fam = p.family + "/*";
  if (trim(text).empty()) return p;
  for (std::string_view item : split(text, ',')) {
    const std::size_t eq = item.find('=');
    if (eq == std::string_view::npos)
      throw std::invalid_argument("pins: '" + std::string(item) + "' is not key=value (e.g. K=32 or L=4|17)");
    const std::string_view name = trim(item.substr(0, eq)), value = trim(item.substr(eq + 1));
    if (name == "layout") {
      if (value != "compact" && value != "any")
        throw std::invalid_argument("pins: layout=" + std::string(value) + " is not compact or any");
      p.compact = value == "compact";
      continue;
    }
    const Key* key = nullptr;
    for (const Key& k : keys(p.family))
      if (name == k.name) key = &k;
    if (!key)
      throw std::invalid_argument("pins: unknown key '" + std::string(name) + "' for " + fam + " (known: " +
                                  key_names(p.family) + ")");
    if (key->size ? !(p.*key->sizes).empty() : !(p.*key->dtypes).empty())
      throw std::invalid_argument("pins: " + std::string(name) + " given twice");
    for (std::string_view v : split(value, '|')) {
      if (key->size) {
        I x = 0;
        const auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), x);
        if (ec != std::errc() || end != v.data() + v.size() || x < 1 || x > 4096)
          throw std::invalid_argument("pins: " + std::string(name) + "=" + std::string(v) +
                                      " is not a size in [1, 4096]");
        (p.*key->sizes).push_back(x);
      } else {
        const auto t = parse_dtype(v);
        if (!t || !dtype_allowed(name, *t))
          throw std::invalid_argument("pins: " + std::string(name) + "=" + std::string(v) + " is not one of " +
                                      (name == "dtype" ? "bf16, f16" : "f32, bf16, f16"));
        (p.*key->dtypes).push_back(*t);
      }
    }
  }
  // Every pinned H must have a pinned HV that is a multiple of it (HV = G * H, kda.md A.1).
  if (p.family == "kda" && !p.HV.empty())
    for (I h : p.H.empty() ? std::vector<I>{1} : p.H) {
      bool fits = false;
      for (I hv : p.HV) fits = fits || hv % h == 0;
      if (!fits)
        throw std::invalid_argument("pins: no pinned HV is a multiple of H=" + std::to_string(h) +
                                    " (value heads come in groups of query heads)");
    }
  return p;
}

const ShapePins* pins_for(const GenConfig& cfg, std::string_view family) {
  return cfg.pins && cfg.pins->family == family && !cfg.pins->empty() ? cfg.pins : nullptr;
}

}  // namespace kparity::fuzz
