// kparity-fuzz-host: kparity's fuzz campaign for a Python implementation, in a process of its own
// that kparity.fuzz.check_implementation starts (python/kparity/fuzz/_host.py). It runs the C++
// campaign (generators, shrinking, the one differential rule, the report) with a backend that sends
// each case to the Python side over stdin/stdout (protocol.hpp) and applies the answer: the call's
// images after the implementation ran (guard bands, inputs and padding checked here, written spans
// copied back), the outputs it returned, or the failure class it earned.
//
// Why a process and not an extension module: Debian's RapidCheck is a static library built for
// position-dependent executables, which a Python extension (a shared object) cannot link.
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstdio>
#include <iostream>
#include <set>
#include <sstream>

#include "case_handle.hpp"
#include "kparity/fuzz/backends/findings.hpp"
#include "kparity/fuzz/backends/implementation.hpp"
#include "kparity/fuzz/campaign/campaign.hpp"
#include "kparity/fuzz/campaign/report.hpp"
#include "kparity/fuzz/generators/pins.hpp"
#include "kparity/fuzz/generators/presets.hpp"
#include "kparity/ops/op_table.hpp"
#include "protocol.hpp"

namespace kparity::py {
namespace {

using fuzz::Call;
using nlohmann::json;

json case_header(CaseHandle& h, std::vector<std::byte>& payload) {
  const Call& c = h.call();
  json scalars = json::object(), flags = json::object(), tensors = json::array();
  for (const auto& [k, v] : c.scalars) scalars[k] = scalar_text(v);
  for (const auto& [k, v] : c.flags) flags[k] = v;
  for (const auto& [name, t] : c.tensors) {
    const TensorView v = t.view();
    json d = {{"name", name}, {"dtype", dtype_name(v.dtype)}, {"shape", v.shape()}, {"strides", v.stride_vec()},
              {"passed", h.passed(name)}, {"returned", h.returned(name)},
              {"pure", std::find(c.pure_outputs.begin(), c.pure_outputs.end(), name) != c.pure_outputs.end()}};
    if (h.passed(name)) {
      const fuzz::GuardedImage& img = h.image(name);
      d["offset"] = payload.size();
      d["size"] = img.size();
      d["zero_offset"] = img.element_zero_offset();
      payload.insert(payload.end(), img.bytes().begin(), img.bytes().end());
    }
    tensors.push_back(std::move(d));
  }
  return {{"type", "case"}, {"op", c.op}, {"description", c.description}, {"scalars", scalars}, {"flags", flags},
          {"tensors", tensors}};
}

// What the Python side's supports= predicate sees of a call (kparity.fuzz.CallInfo): shapes,
// dtypes, strides, scalars and flags, never the tensors' values.
json call_info(const Call& c, const std::string& preset) {
  json scalars = json::object(), flags = json::object(), tensors = json::array();
  for (const auto& [k, v] : c.scalars) scalars[k] = scalar_text(v);
  for (const auto& [k, v] : c.flags) flags[k] = v;
  const ops::OpInfo& info = ops::op_info(c.op);
  for (const auto& [name, t] : c.tensors) {
    const TensorView v = t.view();
    const bool written = std::find(c.written.begin(), c.written.end(), name) != c.written.end();
    const ops::Param* p = info.param(name);
    tensors.push_back({{"name", name}, {"dtype", dtype_name(v.dtype)}, {"shape", v.shape()}, {"strides", v.stride_vec()},
                       {"storage_offset", t.storage_offset()}, {"contiguous", v.is_contiguous()},
                       {"returned", written && p && p->keyword_only}});
  }
  return {{"op", c.op}, {"description", c.description}, {"scalars", scalars}, {"flags", flags},
          {"tensors", tensors}, {"preset", preset}};
}

// One question to the Python side and its answer. A broken channel ends the process: nobody is
// listening any more, so there is no campaign to finish.
Message exchange(Channel& ch, const Message& out) {
  try {
    ch.send(out);
    return ch.receive();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s\n", e.what());
    std::_Exit(3);
  }
}

// Asks the Python side whether the implementation supports a call: "" or why not.
std::string ask_supports(Channel& ch, const Call& c, const std::string& preset) {
  Message out;
  out.header = {{"type", "supports"}, {"call", call_info(c, preset)}};
  const Message in = exchange(ch, out);
  if (in.header.value("type", "") != "supports")
    throw std::runtime_error("kparity-fuzz-host: expected the answer to a supports question");
  if (in.header.at("ok").get<bool>()) return "";
  const std::string why = in.header.value("reason", "");
  return why.empty() ? "outside the declared domain" : why;
}

std::span<const std::byte> slice(const Message& m, const json& entry) {
  const std::size_t at = entry.at("offset").get<std::size_t>(), n = entry.at("size").get<std::size_t>();
  if (at + n > m.payload.size()) throw std::runtime_error("kparity-fuzz-host: an answer's payload is too short");
  return {m.payload.data() + at, n};
}

// One case: send it, apply the answer (throws the case's verdict).
void run_case(Channel& ch, Call& c) {
  CaseHandle h(c);
  Message out;
  out.header = case_header(h, out.payload);
  const Message in = exchange(ch, out);
  const json& verdict = in.header.at("verdict");
  if (!verdict.is_null()) {
    const std::string kind = verdict.at(0).get<std::string>(), message = verdict.at(1).get<std::string>();
    if (kind == "unsupported") throw fuzz::BackendUnsupported(message);
    const auto cls = fuzz::parse_failure_class(kind);
    if (!cls) throw std::runtime_error("kparity-fuzz-host: unknown failure class '" + kind + "'");
    throw fuzz::ImplFailure(*cls, message, verdict.size() > 2 ? verdict.at(2).get<std::string>() : "",
                            verdict.size() > 3 ? verdict.at(3).get<std::string>() : "");
  }
  std::string problems;
  for (const auto& e : in.header.at("images")) {
    const std::string p = h.image(e.at("name").get<std::string>()).finish(slice(in, e));
    if (!p.empty()) problems += (problems.empty() ? "" : "; ") + p;
  }
  if (!problems.empty()) throw fuzz::ImplFailure(fuzz::FailureClass::wrote_outside_outputs, problems);
  if (const json& bad = in.header.at("bad_return"); !bad.is_null())
    throw fuzz::ImplFailure(fuzz::FailureClass::bad_return, bad.get<std::string>());
  for (const auto& e : in.header.at("outputs")) {
    const std::string name = e.at("name").get<std::string>();
    const auto dt = parse_dtype(e.at("dtype").get<std::string>());
    if (!dt) throw std::runtime_error("kparity-fuzz-host: unknown dtype in an answer");
    const Shape shape = e.at("shape").get<Shape>();
    const auto bytes = slice(in, e);
    const TensorView view(const_cast<std::byte*>(bytes.data()), *dt, std::span<const std::int64_t>(shape));
    if (static_cast<std::size_t>(view.numel()) * view.element_size() != bytes.size())
      throw std::runtime_error("kparity-fuzz-host: output `" + name + "` has the wrong byte count");
    if (const std::string p = h.set_output(name, view); !p.empty())
      throw fuzz::ImplFailure(fuzz::FailureClass::bad_return, "returned `" + name + "` of " + p);
  }
}

// Adapts drawn calls to a callable that accepts only the parameters in `accepted` (its signature):
// a parameter it lacks must be absent or at upstream's default in the call, except return_lse,
// which is switched off (lse dropped); otherwise the case is discarded. Outputs upstream allocates
// are never passed, so they need no parameter.
std::function<bool(Call&)> adapter(const json& accepted) {
  if (accepted.is_null()) return {};
  return [names = accepted.get<std::set<std::string>>()](Call& c) {
    const ops::OpInfo& info = ops::op_info(c.op);
    for (const auto& p : info.params) {
      const std::string name(p.name);
      if (names.count(name) || (p.keyword_only && info.writes(p.name))) continue;
      bool used = false;
      switch (p.kind) {
        case ops::ArgKind::tensor: used = c.tensors.count(name) != 0; break;
        case ops::ArgKind::scalar: {
          const auto it = c.scalars.find(name);
          used = it != c.scalars.end() && !(p.default_value == "0.0" && it->second == 0.0);
          break;
        }
        case ops::ArgKind::flag: used = c.flags.count(name) && c.flags.at(name); break;
      }
      // kda/recurrent's output_final_state is implied by the final_state tensor (op table).
      if (!used || name == "output_final_state") continue;
      if (name != "return_lse") return false;
      c.flags[name] = false;
      c.tensors.erase("lse");
      std::erase(c.written, std::string("lse"));
      std::erase(c.pure_outputs, std::string("lse"));
    }
    return true;
  };
}

json run(Channel& ch, const json& cfg) {
  const std::string op = cfg.at("op"), name = cfg.at("name");
  const std::string preset_name = cfg.value("preset", "");
  fuzz::Backend backend{name, {op}, [&ch](Call& c) { run_case(ch, c); }};
  fuzz::ImplPropertyOptions po;
  po.kinds = cfg.at("kinds").get<std::vector<std::string>>();
  po.large = cfg.at("large");
  po.on_device = cfg.at("on_device");
  po.contract_messages = cfg.at("contract_messages");
  po.adapt = adapter(cfg.at("accepted"));
  if (!preset_name.empty() && preset_name != "small" && preset_name != "large") {
    po.preset = fuzz::find_shape_preset(preset_name);
    if (!po.preset)
      throw std::invalid_argument("unknown preset '" + preset_name + "' (known: " + fuzz::shape_preset_names() + ")");
    if (const std::string why = fuzz::preset_mismatch(*po.preset, op); !why.empty()) throw std::invalid_argument(why);
  }
  // Pins (generators/pins.hpp): the compile classes the caller asked for, in their text form.
  fuzz::ShapePins pins;
  if (const std::string text = cfg.value("pins", ""); !text.empty()) {
    if (po.preset) throw std::invalid_argument("pins= and a real-model preset do not go together (the preset fixes the shapes)");
    pins = fuzz::parse_shape_pins(text, op);
    po.pins = &pins;
  }
  if (cfg.value("supports", false))
    po.supports = [&ch, preset_name](const Call& c) { return ask_supports(ch, c, preset_name); };
  po.ledgers = std::make_shared<std::map<std::string, std::shared_ptr<fuzz::FindingLedger>>>();
  const auto profile = reference::parse_profile(cfg.at("profile").get<std::string>());
  if (!profile) throw std::invalid_argument("unknown precision profile");
  po.profile = *profile;
  std::vector<fuzz::Property> props = fuzz::implementation_properties(backend, {fuzz::spec_for(op)}, po);
  fuzz::CampaignOptions c;
  c.seed = std::stoull(cfg.at("seed").get<std::string>(), nullptr, 0);
  c.backend = "all";
  c.property = cfg.at("property");
  if (!cfg.at("cases").is_null()) c.cases = cfg.at("cases").get<int>();
  if (!cfg.at("seconds").is_null()) c.seconds = cfg.at("seconds").get<double>();
  c.max_size = cfg.at("max_size");
  c.shrink = cfg.at("shrink");
  c.corpus_dir = cfg.at("corpus");
  props = fuzz::select_properties(props, c);
  fuzz::FindingRunOptions fo;
  fo.max_findings = cfg.value("max_findings", 5);
  fo.known = cfg.value("known", std::vector<std::string>{});
  fo.explain.seconds = cfg.value("explain_seconds", fo.explain.seconds);
  std::ostringstream log;
  const fuzz::FindingCampaign r = fuzz::run_finding_campaign(props, *po.ledgers, c, fo, {{name, true, ""}}, log);
  return {{"type", "done"}, {"report", r.report()}, {"log", log.str()}};
}

}  // namespace
}  // namespace kparity::py

int main() {
  using namespace kparity::py;
  // The protocol owns the original stdout; anything else printed goes to stderr.
  const int out_fd = dup(STDOUT_FILENO);
  std::fflush(stdout);
  dup2(STDERR_FILENO, STDOUT_FILENO);
  Channel ch(STDIN_FILENO, out_fd);
  Message done;
  try {
    const Message cfg = ch.receive();
    done.header = run(ch, cfg.header);
  } catch (const std::exception& e) {
    done.header = {{"type", "error"}, {"message", e.what()}};
  }
  try {
    ch.send(done);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 3;
  }
  return done.header.at("type") == "done" ? 0 : 1;
}
