// Failure classes of an implementation under test (failure.hpp).
#include "kparity/fuzz/backends/failure.hpp"

#include <array>
#include <utility>

namespace kparity::fuzz {
namespace {

constexpr std::array<std::pair<FailureClass, std::string_view>, 9> kNames{{
    {FailureClass::wrong_values, "wrong-values"},
    {FailureClass::wrote_outside_outputs, "wrote-outside-outputs"},
    {FailureClass::not_deterministic, "not-deterministic"},
    {FailureClass::crashed, "crashed"},
    {FailureClass::rejected_valid_call, "rejected-valid-call"},
    {FailureClass::accepted_hostile_call, "accepted-hostile-call"},
    {FailureClass::wrong_message, "wrong-message"},
    {FailureClass::timed_out, "timed-out"},
    {FailureClass::bad_return, "bad-return"},
}};

}  // namespace

std::string_view failure_class_name(FailureClass c) noexcept {
  for (const auto& [k, n] : kNames)
    if (k == c) return n;
  return "unknown";
}

std::optional<FailureClass> parse_failure_class(std::string_view name) noexcept {
  for (const auto& [k, n] : kNames)
    if (n == name) return k;
  return std::nullopt;
}

const std::vector<FailureClass>& all_failure_classes() {
  static const std::vector<FailureClass> all = [] {
    std::vector<FailureClass> v;
    for (const auto& [k, n] : kNames) v.push_back(k);
    return v;
  }();
  return all;
}

ImplFailure::ImplFailure(FailureClass c, const std::string& message, std::string raised, std::string raised_class)
    : std::runtime_error("[" + std::string(failure_class_name(c)) + "] " + message),
      class_(c),
      raised_(std::move(raised)),
      raised_class_(std::move(raised_class)) {}

std::optional<FailureClass> failure_class_of(std::string_view message) noexcept {
  // RapidCheck puts its own words before the property's message; the tag is the first "[name]".
  for (std::size_t at = message.find('['); at != std::string_view::npos; at = message.find('[', at + 1)) {
    const std::size_t end = message.find(']', at);
    if (end == std::string_view::npos) return std::nullopt;
    if (auto c = parse_failure_class(message.substr(at + 1, end - at - 1))) return c;
  }
  return std::nullopt;
}

}  // namespace kparity::fuzz
