#pragma once
// The backends under test are the rule's (kparity/judge/backend.hpp); the fuzz harness names them here.
#include "kparity/fuzz/call.hpp"
#include "kparity/judge/backend.hpp"

namespace kparity::fuzz {
using judging::Backend;
using judging::BackendUnsupported;
using judging::cuda_backend_ops;
using judging::cuda_backends;
using judging::DeviceProbe;
using judging::probe_cuda;
}  // namespace kparity::fuzz
