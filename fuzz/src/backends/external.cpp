// An implementation plugin (kparity/impl_abi.h) as a fuzz backend (external.hpp): its tensors
// inside guard bands, in shared host memory for a CPU plugin (called in a forked child) or, through
// the CUDA backend's DeviceMirror, on the device (called on a worker thread).
#include "kparity/fuzz/backends/external.hpp"

#include <poll.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <mutex>
#include <set>
#include <thread>

#include <fmt/format.h>

#include "kparity/fuzz/backends/guarded_image.hpp"

#ifdef KPARITY_FUZZ_KERNELS
#include "kparity/judge/device_mirror.hpp"
#endif

namespace kparity::fuzz {
namespace {

// A GuardedImage in shared anonymous memory (page-aligned, so at least as aligned as cudaMalloc's
// 256 bytes) for a kDLCPU plugin: the plugin runs in a forked child, whose writes land here.
class HostMirror {
 public:
  HostMirror(std::string name, Tensor& host, bool written) : image_(std::move(name), host, written) {
    void* p = mmap(nullptr, image_.size(), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) throw std::runtime_error("mmap for `" + image_.name() + "`: " + std::strerror(errno));
    base_ = static_cast<std::byte*>(p);
    std::memcpy(base_, image_.bytes().data(), image_.size());
    view_ = image_.view_at(base_, Device::cpu());
  }
  HostMirror(const HostMirror&) = delete;
  HostMirror& operator=(const HostMirror&) = delete;
  ~HostMirror() { munmap(base_, image_.size()); }
  const TensorView& view() const { return view_; }
  std::string finish() { return image_.finish({base_, image_.size()}); }

 private:
  GuardedImage image_;
  std::byte* base_ = nullptr;
  TensorView view_;
};

// A kDLCPU plugin's call in a forked child process, so that a crash (a signal) or a hang (killed
// at the time limit) is a verdict about the case instead of the end of the campaign. The child
// sees the mirrors' shared memory and sends the status and message back through a pipe.
struct ChildOutcome {
  bool timed_out = false;
  int signal = 0;          // the signal that ended the child
  std::string error;       // the child could not report (an exception on the loader side, a bad exit)
  abi::PluginResult result;
};

ChildOutcome call_in_child(const abi::Plugin& plugin, const std::string& op, const ArgBag& bag, double timeout) {
  int fds[2];
  if (pipe(fds) != 0) throw std::runtime_error(std::string("pipe: ") + std::strerror(errno));
  std::fflush(nullptr);  // nothing buffered may be written twice
  const pid_t pid = fork();
  if (pid < 0) throw std::runtime_error(std::string("fork: ") + std::strerror(errno));
  if (pid == 0) {
    close(fds[0]);
    std::string payload;
    try {
      const abi::PluginResult r = plugin.call(op, bag, nullptr);
      payload = std::to_string(static_cast<int>(r.status)) + "\n" + r.message;
    } catch (const std::exception& e) {
      payload = std::string("E\n") + e.what();
    }
    for (std::size_t at = 0; at < payload.size();) {
      const ssize_t n = write(fds[1], payload.data() + at, payload.size() - at);
      if (n <= 0) break;
      at += static_cast<std::size_t>(n);
    }
    _exit(0);
  }
  close(fds[1]);
  ChildOutcome out;
  std::string payload;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout);
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      out.timed_out = true;
      kill(pid, SIGKILL);
      break;
    }
    pollfd pfd{fds[0], POLLIN, 0};
    const int ready = poll(&pfd, 1, static_cast<int>(std::min<std::int64_t>(left.count(), 1000)));
    if (ready < 0 && errno != EINTR) break;
    if (ready <= 0) continue;
    char buf[4096];
    const ssize_t n = read(fds[0], buf, sizeof buf);
    if (n <= 0) break;  // end of file: the child is done (or died)
    payload.append(buf, static_cast<std::size_t>(n));
  }
  close(fds[0]);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (out.timed_out) return out;
  if (WIFSIGNALED(status)) {
    out.signal = WTERMSIG(status);
    return out;
  }
  const auto nl = payload.find('\n');
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || nl == std::string::npos) {
    out.error = "the child running the plugin ended without an answer (exit status " +
                std::to_string(WIFEXITED(status) ? WEXITSTATUS(status) : -1) + ")";
    return out;
  }
  if (payload.compare(0, nl, "E") == 0) {
    out.error = payload.substr(nl + 1);
    return out;
  }
  out.result.status = static_cast<kparity_impl_status>(std::stoi(payload.substr(0, nl)));
  out.result.message = payload.substr(nl + 1);
  return out;
}

// Everything one plugin call touches. A call abandoned at its time limit keeps this alive (the
// worker thread owns a reference) so the plugin never writes freed memory.
struct PluginRun {
  std::vector<std::unique_ptr<HostMirror>> host;
#ifdef KPARITY_FUZZ_KERNELS
  std::vector<std::unique_ptr<judging::DeviceMirror>> device;
#endif
  ArgBag bag;
  abi::PluginResult result;
  std::string error;  // an exception from the loader side of the call
};

bool is_written(const Call& c, const std::string& name) {
  return std::find(c.written.begin(), c.written.end(), name) != c.written.end();
}

void mirror(PluginRun& run, Call& c, bool cuda) {
  for (auto& [name, t] : c.tensors) {
    if (cuda) {
#ifdef KPARITY_FUZZ_KERNELS
      auto m = std::make_unique<judging::DeviceMirror>(name, t, is_written(c, name));
      run.bag.tensors.emplace(name, m->view());
      run.device.push_back(std::move(m));
#else
      throw std::runtime_error("a kDLCUDA plugin needs a kparity built with its CUDA kernels (nvcc at build time)");
#endif
    } else {
      auto m = std::make_unique<HostMirror>(name, t, is_written(c, name));
      run.bag.tensors.emplace(name, m->view());
      run.host.push_back(std::move(m));
    }
  }
  run.bag.scalars = c.scalars;
  run.bag.flags = c.flags;
}

// The device after a CUDA plugin's call: pending errors, then the mirrors, then the probe that
// pins a context-corrupting fault on this case. Returns the hygiene problems.
std::string settle(PluginRun& run, bool cuda) {
  std::string problems;
  auto add = [&](std::string s) {
    if (!s.empty()) problems += (problems.empty() ? "" : "; ") + s;
  };
#ifdef KPARITY_FUZZ_KERNELS
  if (cuda) {
    cudaError_t e = cudaDeviceSynchronize();
    if (e == cudaSuccess) e = cudaGetLastError();
    if (e != cudaSuccess)
      throw ImplFailure(FailureClass::crashed, std::string("CUDA error after the call: ") + cudaGetErrorString(e));
    try {
      for (auto& m : run.device) add(m->finish());
      judging::probe_device();
    } catch (const std::exception& ex) {
      throw ImplFailure(FailureClass::crashed, std::string("the device is unusable after the call: ") + ex.what());
    }
  }
#else
  (void)cuda;
#endif
  for (auto& m : run.host) add(m->finish());
  return problems;
}

[[noreturn]] void timed_out(const abi::Plugin& plugin, double seconds, const char* what) {
  throw ImplFailure(FailureClass::timed_out, fmt::format("{} gave no answer within {} s; {}", plugin.name(), seconds, what));
}

// A kDLCUDA plugin runs on a worker thread (CUDA contexts do not survive fork): a hung call is
// abandoned, and a crash takes the process with it.
abi::PluginResult call_on_thread(const std::shared_ptr<const abi::Plugin>& plugin, const std::shared_ptr<PluginRun>& run,
                                 const std::string& op, const ExternalOptions& o, std::atomic<bool>& hung) {
  const bool done = run_with_timeout(
      [run, plugin, op] {
        try {
          run->result = plugin->call(op, run->bag, nullptr);
        } catch (const std::exception& e) {
          run->error = e.what();
        }
      },
      o.case_timeout, run);
  if (!done) {
    hung = true;
    timed_out(*plugin, o.case_timeout, "the call is abandoned (its buffers stay allocated) and later calls are skipped");
  }
  if (!run->error.empty()) throw std::runtime_error("calling " + plugin->name() + ": " + run->error);
  return run->result;
}

abi::PluginResult call_isolated(const abi::Plugin& plugin, const PluginRun& run, const std::string& op,
                                const ExternalOptions& o) {
  const ChildOutcome r = call_in_child(plugin, op, run.bag, o.case_timeout);
  if (r.timed_out) timed_out(plugin, o.case_timeout, "its process was killed");
  if (r.signal)
    throw ImplFailure(FailureClass::crashed,
                      fmt::format("{} killed its process with signal {} ({})", plugin.name(), r.signal, strsignal(r.signal)));
  if (!r.error.empty()) throw std::runtime_error("calling " + plugin.name() + ": " + r.error);
  return r.result;
}

constexpr std::size_t kMaxTimeouts = 4;

struct PluginState {
  std::atomic<bool> hung{false};
  // Calls that timed out: RapidCheck re-runs the shrunk counterexample last, and that re-run must
  // get the same verdict while the plugin's thread is still stuck.
  std::set<std::uint64_t> timed_out;
};

void run_plugin(const std::shared_ptr<const abi::Plugin>& plugin, Call& c, const ExternalOptions& o,
                PluginState& state) {
  const std::uint64_t key = call_fingerprint(c);
  if (state.timed_out.count(key))
    timed_out(*plugin, o.case_timeout, "the call was abandoned (its buffers stay allocated)");
  if (state.hung) throw BackendUnsupported("an earlier call of " + plugin->name() + " never returned; later calls are skipped");
  const bool cuda = plugin->device().is_cuda();
  auto run = std::make_shared<PluginRun>();
  mirror(*run, c, cuda);
  abi::PluginResult r;
  try {
    r = cuda ? call_on_thread(plugin, run, c.op, o, state.hung) : call_isolated(*plugin, *run, c.op, o);
  } catch (const ImplFailure& e) {
    if (e.failure_class() == FailureClass::timed_out) {
      state.timed_out.insert(key);
      // Each timeout costs the whole limit (and a CUDA one leaks a thread): shrinking may look for
      // a smaller hanging call a few times, then later calls are skipped.
      if (state.timed_out.size() >= kMaxTimeouts) state.hung = true;
    }
    throw;
  }
  const std::string problems = settle(*run, cuda);
  if (!problems.empty()) throw ImplFailure(FailureClass::wrote_outside_outputs, problems);
  switch (r.status) {
    case KPARITY_IMPL_OK: return;
    case KPARITY_IMPL_REJECTED:
      throw ImplFailure(FailureClass::rejected_valid_call, "returned KPARITY_IMPL_REJECTED: " + r.message, r.message);
    case KPARITY_IMPL_UNSUPPORTED: throw BackendUnsupported(r.message);
    default:
      throw ImplFailure(FailureClass::crashed,
                        fmt::format("returned status {} ({}): {}", static_cast<int>(r.status), abi::status_name(r.status),
                                    r.message));
  }
}

}  // namespace

bool run_with_timeout(const std::function<void()>& f, double seconds, std::shared_ptr<void> keep_alive) {
  struct State {
    std::mutex m;
    std::condition_variable cv;
    bool done = false;
  };
  auto st = std::make_shared<State>();
  std::thread worker([st, f, keep_alive] {
    f();
    {
      std::lock_guard<std::mutex> lock(st->m);
      st->done = true;
    }
    st->cv.notify_all();
  });
  std::unique_lock<std::mutex> lock(st->m);
  const bool finished = st->cv.wait_for(lock, std::chrono::duration<double>(seconds), [&] { return st->done; });
  lock.unlock();
  if (finished) worker.join();
  else worker.detach();
  return finished;
}

Backend plugin_backend(std::shared_ptr<const abi::Plugin> plugin, const ExternalOptions& options) {
  auto state = std::make_shared<PluginState>();
  Backend b;
  b.name = plugin->name();
  b.ops = plugin->ops();
  b.run = [plugin, options, state](Call& c) { run_plugin(plugin, c, options, *state); };
  return b;
}

}  // namespace kparity::fuzz
