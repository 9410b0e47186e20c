#pragma once
// One case of kparity-fuzz-host for the Python side: the call's tensors passed to the implementation
// as guarded images (fuzz/backends/guarded_image.hpp) to place in torch memory, and the outputs
// upstream allocates, which the implementation returns and set_output stores. Valid while the case
// runs; every method checks that.
#include <map>
#include <memory>
#include <set>
#include <string>

#include "kparity/fuzz/backends/guarded_image.hpp"
#include "kparity/fuzz/call.hpp"

namespace kparity::py {

class CaseHandle {
 public:
  explicit CaseHandle(fuzz::Call& call);
  CaseHandle(const CaseHandle&) = delete;
  CaseHandle& operator=(const CaseHandle&) = delete;

  const fuzz::Call& call() const;
  // Tensors the implementation is called with (the others it returns).
  bool passed(const std::string& name) const { return images_.count(name) != 0; }
  bool returned(const std::string& name) const { return returned_.count(name) != 0; }
  fuzz::GuardedImage& image(const std::string& name);
  // Copies an output the implementation returned (host memory, contiguous, any dtype: converted
  // into the call's dtype) into the call. "" or what is wrong with it.
  std::string set_output(const std::string& name, const TensorView& value);
  void close() { open_ = false; }

 private:
  void require_open() const;

  fuzz::Call* call_;
  std::map<std::string, std::unique_ptr<fuzz::GuardedImage>> images_;
  std::set<std::string> returned_;
  bool open_ = true;
};

}  // namespace kparity::py
