#pragma once
// Named RapidCheck properties and the lists of them: what `kparity fuzz` can run. A property's body
// draws with *gen and asserts with RC_ASSERT; the campaign (campaign/) runs it under a budget.
//
// Where the lists are defined: kda_properties() in properties/kda_properties.cpp (and its
// special-values half), sparse_properties() in properties/sparse_properties.cpp (likewise),
// hostile_properties() in properties/hostile_properties.cpp, launcher_properties() in
// backends/cuda/rejected_launch.cpp (or backends/no_kernels.cpp), the differential ones in
// properties/differential.hpp.
#include <functional>
#include <string>
#include <vector>

namespace kparity::fuzz {

struct Property {
  std::string name;  // "<op>/<relation>", e.g. "kda/replayssm_decode/equals-packed-decode"
  std::string kind;  // metamorphic | hostile | differential | ...
  std::function<void()> body;  // draws with *gen, asserts with RC_ASSERT
  std::string op;       // empty: derived from the name (see op_of)
  std::string backend;  // empty: "reference" (a CPU property); "cuda" for kernel properties
  // Every bucket the property can note, reported with a zero count when never hit (coverage
  // gaps). Empty: the buckets of its op's spec, when the op has one.
  std::vector<std::string> buckets;
};

// The op a property is about: `op` if set, else the name's first two components when they name
// an op with a contract ("kda/packed_decode/..." -> "kda/packed_decode"), else "" (a property
// about every op, like the catalog-wide hostile ones).
std::string op_of(const Property& p);
std::string backend_of(const Property& p);

std::vector<Property> kda_properties();
std::vector<Property> sparse_properties();
std::vector<Property> hostile_properties();

// The reference-side properties (metamorphic, hostile, registered extras): the "reference" backend.
std::vector<Property> cpu_properties();
// The kernel launchers' answer to rejected calls (backends/cuda/rejected_launch.cpp): backend "cuda"
// with a device, "launcher" (host memory labelled cuda:0) without one; empty when kernels are not built.
std::vector<Property> launcher_properties();
// cpu_properties() plus the differential properties of every available CUDA backend.
std::vector<Property> all_properties();
void register_properties(std::vector<Property> extra);

}  // namespace kparity::fuzz
