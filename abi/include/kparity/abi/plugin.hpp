#pragma once
// A shared library implementing ops through kparity/impl_abi.h, loaded with dlopen: what
// `kparity fuzz --impl lib.so` runs (fuzz/src/backends/external.cpp) and tests/abi check.
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "kparity/core/device.hpp"
#include "kparity/diagnostics/checker.hpp"
#include "kparity/impl_abi.h"

namespace kparity::abi {

// A library that cannot be used: dlopen's error, a missing kparity_impl_get_info, another ABI
// version, a device type other than CPU or CUDA, or no op entry point at all.
class PluginError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct PluginResult {
  kparity_impl_status status = KPARITY_IMPL_OK;
  std::string message;  // the plugin's message for a non-OK status
  bool ok() const { return status == KPARITY_IMPL_OK; }
};

std::string_view status_name(int status) noexcept;  // "ok", "rejected", "unsupported", "error", "unknown status"

class Plugin {
 public:
  // dlopen(path) with RTLD_NOW | RTLD_LOCAL; throws PluginError.
  static std::shared_ptr<const Plugin> load(const std::string& path);
  ~Plugin();
  Plugin(const Plugin&) = delete;
  Plugin& operator=(const Plugin&) = delete;

  const std::string& path() const { return path_; }
  const std::string& name() const { return name_; }
  Device device() const { return device_; }  // where its tensors must live (cuda: index 0)
  const std::vector<std::string>& ops() const { return ops_; }  // in op-table order
  bool implements(std::string_view op) const;

  // Calls the op's entry point with the arguments of `bag` (upstream names, as every layer uses
  // them; absent tensors and scalars become NULL), on `stream` (cudaStream_t or nullptr). Throws
  // std::invalid_argument for an op the plugin lacks or a tensor it cannot describe to DLPack.
  PluginResult call(std::string_view op, const ArgBag& bag, void* stream = nullptr) const;

 private:
  Plugin() = default;
  void* symbol(const char* name) const;

  std::string path_, name_;
  Device device_;
  void* handle_ = nullptr;
  std::vector<std::string> ops_;
};

}  // namespace kparity::abi
