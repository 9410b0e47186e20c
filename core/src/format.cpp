#include "kparity/core/format.hpp"

#include <charconv>
#include <cmath>
#include <cstdlib>

namespace kparity {

std::string py_tuple(std::span<const std::int64_t> values) {
  std::string s = "(";
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (i) s += ", ";
    s += std::to_string(values[i]);
  }
  if (values.size() == 1) s += ',';
  return s + ')';
}

std::string py_tuple(std::initializer_list<std::int64_t> values) {
  return py_tuple(std::span<const std::int64_t>(values.begin(), values.size()));
}

std::string py_dtype(DType t) { return std::string(torch_repr(t)); }

std::string py_float(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  // to_chars without a precision gives the shortest digits that round-trip, as CPython's repr does;
  // only the layout differs.
  char buf[64];
  auto res = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::scientific);
  std::string_view sci(buf, static_cast<std::size_t>(res.ptr - buf));
  const std::size_t epos = sci.find('e');
  std::string_view mant = sci.substr(0, epos);
  const int exp = std::atoi(std::string(sci.substr(epos + 1)).c_str());
  std::string out;
  if (mant.front() == '-') {
    out = "-";
    mant.remove_prefix(1);
  }
  std::string digits;
  for (char c : mant) {
    if (c != '.') digits += c;
  }
  const int n = static_cast<int>(digits.size());
  // CPython's float_repr_style 'r' switches to scientific notation outside 1e-4 <= |v| < 1e16.
  if (exp < -4 || exp >= 16) {
    out += digits[0];
    if (n > 1) out += '.' + digits.substr(1);
    char ebuf[8];
    auto er = std::to_chars(ebuf, ebuf + sizeof ebuf, std::abs(exp));
    std::string e(ebuf, er.ptr);
    if (e.size() < 2) e = '0' + e;
    return out + 'e' + (exp < 0 ? '-' : '+') + e;
  }
  if (exp < 0) return out + "0." + std::string(static_cast<std::size_t>(-exp - 1), '0') + digits;
  if (n <= exp + 1) return out + digits + std::string(static_cast<std::size_t>(exp + 1 - n), '0') + ".0";
  const auto point = static_cast<std::size_t>(exp + 1);
  return out + digits.substr(0, point) + '.' + digits.substr(point);
}

std::string py_bool(bool v) { return v ? "True" : "False"; }

}  // namespace kparity
