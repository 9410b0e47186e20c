#include "kparity/reference/planted_fault.hpp"

namespace kparity::reference {

constinit thread_local PlantedFault detail::t_planted_fault = PlantedFault::none;

PlantedFaultScope::PlantedFaultScope(PlantedFault f) noexcept : previous_(detail::t_planted_fault) {
  detail::t_planted_fault = f;
}
PlantedFaultScope::~PlantedFaultScope() { detail::t_planted_fault = previous_; }

}  // namespace kparity::reference
