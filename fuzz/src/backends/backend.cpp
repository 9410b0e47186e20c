// What runs a call (backend.hpp).
#include <algorithm>
#include <string>

#include "kparity/fuzz/backends/backend.hpp"

namespace kparity::fuzz {

bool Backend::implements(std::string_view op) const { return std::find(ops.begin(), ops.end(), op) != ops.end(); }

}  // namespace kparity::fuzz
