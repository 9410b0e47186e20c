#pragma once
// A shared library written to kparity/impl_abi.h as a fuzz backend (`kparity fuzz --impl lib.so`),
// loaded with dlopen through abi/plugin.hpp; it gets the implementation properties of
// implementation.hpp. Built only when DLPack's header was found (KPARITY_FUZZ_PLUGINS).
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "kparity/abi/plugin.hpp"
#include "kparity/fuzz/backends/backend.hpp"
#include "kparity/fuzz/backends/implementation.hpp"

namespace kparity::fuzz {

struct ExternalOptions {
  // Seconds one call may take. A CPU plugin's process is then killed; a CUDA plugin's call is
  // abandoned (its thread detached, its buffers leaked: the plugin may still write them) and every
  // later call of the same backend is declined ("an earlier call never returned").
  double case_timeout = 30.0;
};

// The plugin as a backend named after its info name: every tensor of the call placed inside guard
// bands, pure outputs arriving NaN-poisoned (run_backend), then the hygiene checks. A kDLCPU
// plugin runs in a forked child over shared memory, so a crash (a signal) is reported as the class
// crashed and a hang is killed at the time limit; a kDLCUDA plugin gets device mirrors as the CUDA
// backend does, runs on a worker thread, and the device is probed after the call (a plugin that
// kills the process cannot be survived there). Statuses map to classes: REJECTED ->
// rejected-valid-call, UNSUPPORTED -> the case is discarded, ERROR -> crashed. A CUDA plugin needs a
// kparity built with its kernels (CUDA runtime); without one run() throws.
Backend plugin_backend(std::shared_ptr<const abi::Plugin> plugin, const ExternalOptions& options = {});

// Runs `f` on a worker thread and waits at most `seconds`; false when it did not finish (the thread
// is detached and keeps `keep_alive` alive until it ends).
bool run_with_timeout(const std::function<void()>& f, double seconds, std::shared_ptr<void> keep_alive = {});

}  // namespace kparity::fuzz
