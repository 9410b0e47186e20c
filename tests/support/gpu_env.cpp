#include "support/gpu_env.hpp"

#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <string>

namespace kparity::gpu_test {

bool has_cuda_device() {
  static const bool has = [] {
    int n = 0;
    return cudaGetDeviceCount(&n) == cudaSuccess && n > 0;
  }();
  return has;
}

namespace {
void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) throw std::runtime_error(std::string(what) + ": " + cudaGetErrorString(e));
}
}  // namespace

DevTensor::DevTensor(const Tensor& host) {
  bytes_ = host.storage().size();
  check(cudaMalloc(&base_, bytes_ ? bytes_ : 16), "cudaMalloc");
  view_ = host.view();
  view_.data = static_cast<char*>(base_) + host.storage_offset() * static_cast<std::int64_t>(host.view().element_size());
  view_.device = Device::cuda(0);
  upload(host);
}

DevTensor& DevTensor::operator=(DevTensor&& o) noexcept {
  std::swap(base_, o.base_);
  std::swap(bytes_, o.bytes_);
  std::swap(view_, o.view_);
  return *this;
}

DevTensor::~DevTensor() {
  if (base_) cudaFree(base_);
}

void DevTensor::upload(const Tensor& host) {
  if (host.storage().size() != bytes_) throw std::logic_error("DevTensor::upload: storage size differs");
  if (bytes_) check(cudaMemcpy(base_, host.storage().data(), bytes_, cudaMemcpyHostToDevice), "upload");
}

void DevTensor::download(Tensor& host) const {
  if (host.storage().size() != bytes_) throw std::logic_error("DevTensor::download: storage size differs");
  if (bytes_) check(cudaMemcpy(host.storage().data(), base_, bytes_, cudaMemcpyDeviceToHost), "download");
}

void DevTensor::poison() {
  if (bytes_) check(cudaMemset(base_, 0xFF, bytes_), "poison");
}

}  // namespace kparity::gpu_test

namespace {
// One line for the whole binary; each device test then GTEST_SKIPs (KPARITY_REQUIRE_GPU), which
// gtest reports as [  SKIPPED ] and ctest as Skipped. (A skip in the environment itself would be
// reported as passed by gtest 1.12.)
class NoDeviceSkip : public ::testing::Environment {
 public:
  void SetUp() override {
    if (!kparity::gpu_test::has_cuda_device()) {
      std::fputs("skipped: no CUDA device\n", stdout);
      std::fflush(stdout);
    }
  }
};
[[maybe_unused]] ::testing::Environment* const kEnv = ::testing::AddGlobalTestEnvironment(new NoDeviceSkip);
}  // namespace
