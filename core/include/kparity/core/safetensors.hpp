#pragma once
// safetensors files: 8-byte little-endian header length, JSON header, raw little-endian data.
#include <filesystem>
#include <map>
#include <stdexcept>
#include <string>

#include "kparity/core/tensor.hpp"

namespace kparity {

// Malformed input; the message says what is wrong and where. Never a partial read.
class SafetensorsError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct SafetensorsFile {
  std::map<std::string, Tensor> tensors;  // contiguous host tensors
  std::map<std::string, std::string> metadata;
};

SafetensorsFile read_safetensors(const std::filesystem::path& path);
SafetensorsFile parse_safetensors(const std::byte* bytes, std::size_t size);
// Writes the tensors contiguously (non-contiguous views are packed); atomic via rename.
void write_safetensors(const std::filesystem::path& path, const std::map<std::string, TensorView>& tensors,
                       const std::map<std::string, std::string>& metadata = {});

}  // namespace kparity
