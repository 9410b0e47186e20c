#include "support/gpu_env.hpp"

#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <string>

namespace kparity::gpu_test {

namespace {

// Probed once per binary. cudaGetDeviceCount answers cudaErrorNoDevice on a machine whose driver
// sees no GPU, and cudaErrorInsufficientDriver both where no driver is installed at all (CI) and
// where an installed driver is older than the runtime: cudaDriverGetVersion, which reports 0 when
// no driver is installed, tells those two apart.
struct Probe {
  bool present = false;
  std::string reason;
};

const Probe& probe() {
  static const Probe p = [] {
    Probe r;
    int n = 0;
    const cudaError_t e = cudaGetDeviceCount(&n);
    int driver = 0, runtime = 0;
    cudaDriverGetVersion(&driver);
    cudaRuntimeGetVersion(&runtime);
    if (e == cudaSuccess && n > 0) {
      r.present = true;
    } else if (e == cudaSuccess || e == cudaErrorNoDevice) {
      r.reason = "no CUDA device";
    } else if (e == cudaErrorInsufficientDriver && driver == 0) {
      r.reason = "no CUDA device (no CUDA driver installed)";
    } else {
      r.reason = std::string("no usable CUDA device: cudaGetDeviceCount failed with ") + cudaGetErrorName(e) + " (" +
                 std::to_string(static_cast<int>(e)) + "): " + cudaGetErrorString(e) + "; driver API version " +
                 std::to_string(driver) + ", runtime version " + std::to_string(runtime);
    }
    cudaGetLastError();  // a failed probe leaves no sticky error for the tests that follow
    return r;
  }();
  return p;
}

}  // namespace

bool has_cuda_device() { return probe().present; }
const std::string& no_device_reason() { return probe().reason; }

bool expect_gpu() {
  const char* v = std::getenv("KPARITY_EXPECT_GPU");
  return v != nullptr && std::string(v) == "1";
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
// reported as passed by gtest 1.12.) A CUDA error of the probe is printed here in full.
class NoDeviceSkip : public ::testing::Environment {
 public:
  void SetUp() override {
    if (kparity::gpu_test::has_cuda_device()) return;
    const std::string line = (kparity::gpu_test::expect_gpu() ? "FAILING (KPARITY_EXPECT_GPU=1): " : "skipped: ") +
                             kparity::gpu_test::no_device_reason() + "\n";
    std::fputs(line.c_str(), stdout);
    std::fflush(stdout);
  }
};
[[maybe_unused]] ::testing::Environment* const kEnv = ::testing::AddGlobalTestEnvironment(new NoDeviceSkip);
}  // namespace
