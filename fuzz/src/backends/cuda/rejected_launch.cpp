// Issue 7 "never a kernel launch on a rejected call": a valid call of the op, one catalog mutation
// (fuzz/src/mutator/), the op's kernel launcher. The launcher must answer with exactly the
// mutation's catalog id, and no byte of any argument may change (no kernel ran, nothing is half
// written). With a device the arguments are device mirrors inside guard bands (DeviceMirror checks
// every byte and both bands). Without one they stay in host memory labelled cuda:0, as the catalog
// examples do: the launcher must still answer with the id, before any CUDA call (an attempted copy
// or launch would answer with a CUDA error instead); data-dependent entries need the launcher's
// deep pass, which copies from the device, so only the device mode reaches them.
#include <cuda_runtime_api.h>

#include <map>
#include <memory>
#include <rapidcheck.h>
#include <string>
#include <vector>

#include "kparity/diagnostics/catalog.hpp"
#include "kparity/fuzz/backends/backend.hpp"
#include "kparity/fuzz/backends/rejected_case.hpp"
#include "kparity/fuzz/generators/op_spec.hpp"
#include "kparity/fuzz/mutator/mutator.hpp"
#include "kparity/fuzz/properties/property.hpp"
#include "kparity/judge/device_mirror.hpp"
#include "kparity/judge/kernel_launch.hpp"

namespace kparity::fuzz {
namespace {

using judging::cuda_check;
using judging::DeviceMirror;

std::string verdict_text(const Status& st) {
  if (st.ok()) return "accepted (a launch may have run)";
  const Diagnostic& d = *st.first_error();
  return d.id.empty() ? d.render_text() : d.id + ": " + d.message;
}

void rejected_call_never_launches(const std::string& op, const std::vector<Mutation>& muts, bool on_device) {
  RC_PRE(!muts.empty());
  // A mutation the drawn call cannot express is drawn again for the same call (rejected_case.hpp):
  // discarding such cases left 13 of 113 kda/recurrent cases unchecked (issue 23 item 4).
  auto drawn = draw_rejected_case(op, muts);
  if (!drawn) RC_DISCARD("no mutation of " + op + " can be expressed on this call");
  const Mutation& m = drawn->mutation;
  Mutant& mu = drawn->mutant;
  RC_LOG() << m.slug << " (" << m.id << "): " << m.what << "\n" << mu.call.description << "\n";

  kernels::LaunchOptions o;
  o.validate = m.options;
  o.validate.entry = Entry::cuda_kernel;
  if (!on_device) o.validate.deep = false;
  o.sync_after_launch = true;

  if (!on_device) {
    std::map<std::string, std::vector<std::byte>> before;
    for (const auto& [name, t] : mu.call.tensors) before[name] = t.storage();
    const Status st = judging::launch_kernel(op, mu.bag(), nullptr, o);
    RC_LOG() << verdict_text(st) << "\n";
    RC_ASSERT(!st.ok());
    RC_ASSERT(st.first_error()->id == m.id);
    for (const auto& [name, t] : mu.call.tensors) RC_ASSERT(t.storage() == before.at(name));
    return;
  }
  std::map<std::string, std::unique_ptr<DeviceMirror>> mirrors;
  for (auto& [name, t] : mu.call.tensors) mirrors.emplace(name, std::make_unique<DeviceMirror>(name, t, false));
  ArgBag dev = mu.bag();  // the mutant's labels and aliases, re-pointed at the device copies
  for (auto& [name, v] : dev.tensors) {
    const auto alias = mu.alias.find(name);
    v.data = mirrors.at(alias == mu.alias.end() ? name : alias->second)->view().data;
  }
  const Status st = judging::launch_kernel(op, dev, nullptr, o);
  RC_LOG() << verdict_text(st) << "\n";
  cuda_check(cudaDeviceSynchronize(), "after the rejected call");
  std::string problems;
  for (auto& [name, mirror] : mirrors)
    if (std::string p = mirror->finish(); !p.empty()) problems += (problems.empty() ? "" : "; ") + p;
  RC_LOG() << problems << "\n";
  RC_ASSERT(!st.ok());
  RC_ASSERT(st.first_error()->id == m.id);
  RC_ASSERT(problems.empty());
}

}  // namespace

std::vector<Property> launcher_properties() { return launcher_properties(probe_cuda(false).available); }

std::vector<Property> launcher_properties(bool on_device) {
  std::vector<Property> out;
  for (const auto& spec : op_specs()) {
    if (!judging::has_kernel(spec.op)) continue;
    Property p;
    p.op = spec.op;
    p.kind = "contracts";
    p.backend = on_device ? "cuda" : "launcher";
    p.name = spec.op + "/rejected-call-never-launches/" + p.backend;
    p.buckets = spec.buckets;
    p.body = [op = spec.op, muts = rejected_call_mutations(spec.op, on_device), on_device] {
      rejected_call_never_launches(op, muts, on_device);
    };
    out.push_back(std::move(p));
  }
  return out;
}

}  // namespace kparity::fuzz
