#pragma once
// How an implementation under test (a plugin, a Python callable) can fail a case, each reported
// under its own name. A backend run throws ImplFailure; the implementation properties
// (external.hpp) turn it into a property failure whose message starts with "[<class>] ", and the
// differential rule's own verdict is the class wrong-values. `kparity fuzz --report` carries the
// message; kparity.fuzz parses the class back from it.
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace kparity::fuzz {

enum class FailureClass {
  wrong_values,           // the differential rule failed (error beyond its bound, a class mismatch)
  wrote_outside_outputs,  // a guard band, an input or the padding of a strided output changed
  not_deterministic,      // the same call twice gave different bits
  crashed,                // an exception that is no input rejection, a CUDA error, an unusable device
  rejected_valid_call,    // raised (or returned a rejection) where upstream accepts the call
  accepted_hostile_call,  // returned normally from a call upstream's checks reject
  wrong_message,          // refused a hostile call, with another message or class than upstream's
  timed_out,              // the per-case time limit passed
  bad_return,             // returned the wrong type, shape or dtype where upstream returns outputs
};

// "wrong-values", "wrote-outside-outputs", ... (the names reports and kparity.fuzz use).
std::string_view failure_class_name(FailureClass c) noexcept;
std::optional<FailureClass> parse_failure_class(std::string_view name) noexcept;
const std::vector<FailureClass>& all_failure_classes();

class ImplFailure : public std::runtime_error {
 public:
  // what() is "[<class>] <message>". `raised`: for a rejection, what the implementation said (its
  // message) and, where known, the exception class it raised ("ValueError"), so that the contract
  // property can compare them with upstream's.
  ImplFailure(FailureClass c, const std::string& message, std::string raised = {}, std::string raised_class = {});
  FailureClass failure_class() const noexcept { return class_; }
  const std::string& raised() const noexcept { return raised_; }
  const std::string& raised_class() const noexcept { return raised_class_; }

 private:
  FailureClass class_;
  std::string raised_, raised_class_;
};

// The class tagged at the start of a failure message ("[timed-out] ..."), if any.
std::optional<FailureClass> failure_class_of(std::string_view message) noexcept;

}  // namespace kparity::fuzz
