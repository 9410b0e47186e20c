#pragma once
// Guard bands and the write-set check (kparity/judge/guard.hpp), named for the fuzz harness.
#include "kparity/judge/guard.hpp"

namespace kparity::fuzz {
using judging::check_guard;
using judging::check_untouched;
using judging::fill_guard;
using judging::guard_pattern;
using judging::kGuardBytes;
}  // namespace kparity::fuzz
