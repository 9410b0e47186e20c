#include "kparity/reference/planted_fault.hpp"

namespace kparity::reference {
namespace {

thread_local PlantedFault t_fault = PlantedFault::none;

}  // namespace

PlantedFault planted_fault() noexcept { return t_fault; }

PlantedFaultScope::PlantedFaultScope(PlantedFault f) noexcept : previous_(t_fault) { t_fault = f; }
PlantedFaultScope::~PlantedFaultScope() { t_fault = previous_; }

}  // namespace kparity::reference
