#include "util.hpp"

#include <algorithm>
#include <cstdio>

namespace kparity::detail {
namespace {

bool ident_start(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
bool ident_char(char c) { return ident_start(c) || (c >= '0' && c <= '9'); }

// Length of a `{name}` placeholder starting at s[i] == '{', or 0 when it is not one.
std::size_t placeholder_len(std::string_view s, std::size_t i) {
  std::size_t j = i + 1;
  if (j >= s.size() || !ident_start(s[j])) return 0;
  while (j < s.size() && ident_char(s[j])) ++j;
  return j < s.size() && s[j] == '}' ? j + 1 - i : 0;
}

}  // namespace

std::string_view trim(std::string_view s) noexcept {
  const auto ws = " \t\r\n\v\f";
  const auto b = s.find_first_not_of(ws);
  if (b == std::string_view::npos) return {};
  return s.substr(b, s.find_last_not_of(ws) - b + 1);
}

std::string json_str(const nlohmann::json& rec, const char* key) {
  auto it = rec.find(key);
  return it != rec.end() && it->is_string() ? it->get<std::string>() : std::string();
}

std::vector<std::string> json_str_list(const nlohmann::json& rec, const char* key) {
  std::vector<std::string> out;
  auto it = rec.find(key);
  if (it == rec.end() || !it->is_array()) return out;
  for (const auto& v : *it)
    if (v.is_string()) out.push_back(v.get<std::string>());
  return out;
}

std::vector<std::string> template_placeholders(std::string_view t) {
  std::vector<std::string> names;
  for (std::size_t i = 0; i < t.size(); ++i) {
    if (t[i] == '{' && i + 1 < t.size() && t[i + 1] == '{') {
      ++i;
    } else if (t[i] == '{') {
      if (auto n = placeholder_len(t, i)) {
        std::string name(t.substr(i + 1, n - 2));
        if (std::find(names.begin(), names.end(), name) == names.end()) names.push_back(name);
        i += n - 1;
      }
    }
  }
  return names;
}

std::string positional_template(std::string_view t, const std::vector<std::string>& order) {
  std::string out;
  for (std::size_t i = 0; i < t.size(); ++i) {
    const char c = t[i];
    if ((c == '{' || c == '}') && i + 1 < t.size() && t[i + 1] == c) {
      out.append(2, c);
      ++i;
      continue;
    }
    if (c == '{') {
      if (auto n = placeholder_len(t, i)) {
        std::string_view name = t.substr(i + 1, n - 2);
        auto it = std::find(order.begin(), order.end(), name);
        if (it != order.end()) {
          out += '{' + std::to_string(it - order.begin()) + '}';
        } else {
          out += "{{";
          out += name;
          out += "}}";
        }
        i += n - 1;
        continue;
      }
    }
    if (c == '{' || c == '}') {
      out.append(2, c);
    } else {
      out += c;
    }
  }
  return out;
}

std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> prev(b.size() + 1), cur(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t sub = prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1);
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, sub});
    }
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

std::uint64_t fnv1a(std::string_view s) noexcept {
  std::uint64_t h = 0xcbf29ce484222325ull;
  for (unsigned char c : s) {
    h ^= c;
    h *= 0x100000001b3ull;
  }
  return h;
}

std::string hex64(std::uint64_t v) {
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(v));
  return buf;
}

}  // namespace kparity::detail
