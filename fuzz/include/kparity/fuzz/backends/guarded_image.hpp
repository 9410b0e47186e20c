#pragma once
// A tensor's guarded byte image (kparity/judge/guarded_image.hpp), named for the fuzz harness.
#include "kparity/fuzz/backends/guard.hpp"
#include "kparity/judge/guarded_image.hpp"

namespace kparity::fuzz {
using judging::GuardedImage;
}  // namespace kparity::fuzz
