// Hostile inputs: whatever a caller passes, the contract answers with exactly one documented
// catalog id (the same first id from check and validate), never another exception or a crash; and
// an input the strict contract accepts runs through the reference to finite outputs.
//
// The contract properties of issue 7 (property 3): every drawn valid call validates cleanly, and
// each catalog-driven mutation (mutator.hpp) turns a drawn valid call into one whose first
// violation is exactly its catalog entry.
#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <rapidcheck.h>
#include <stdexcept>

#include "kparity/core/format.hpp"
#include "kparity/diagnostics/catalog.hpp"
#include "kparity/diagnostics/examples.hpp"
#include "kparity/fuzz/generators/op_spec.hpp"
#include "kparity/fuzz/mutator/mutator.hpp"
#include "kparity/fuzz/properties/compare.hpp"
#include "kparity/fuzz/properties/property.hpp"
#include "kparity/ops/op_table.hpp"

namespace kparity::fuzz {
namespace {

const std::vector<const CatalogEntry*>& active_entries() {
  static const auto entries = [] {
    std::vector<const CatalogEntry*> v;
    for (const auto& e : Catalog::embedded().entries())
      if (e.status == "active" && e.record.contains("erroneousExample") && e.record.value("emittedBy", "contracts") != "kernels")
        v.push_back(&e);
    return v;
  }();
  return entries;
}

// Names whose contents the example pins (fixture or override values/fill): refilling them would
// change what the example is about.
bool pinned(const nlohmann::json& example, const std::string& name) {
  const auto& fx = embedded_fixtures().at(example.at("fixture").get<std::string>());
  if (fx.contains("tensors") && fx["tensors"].contains(name)) {
    const auto& t = fx["tensors"][name];
    if (t.contains("values") || t.contains("fill")) return true;
  }
  if (!example.contains("set")) return false;
  for (const auto& [k, v] : example["set"].items())
    if (k == name + ".values" || k == name + ".fill") return true;
  return false;
}

void refill(BuiltExample& ex, const nlohmann::json& example, std::uint64_t seed) {
  for (auto& t : ex.storage) {
    if (!is_floating(t->dtype())) continue;
    for (const auto& [name, view] : ex.bag.tensors) {
      if (view.data == t->view().data && !pinned(example, name)) t->fill_normal(seed ^ std::hash<std::string>{}(name), 0.0, 0.5);
    }
  }
}

void examples_fire_on_fresh_data() {
  const auto& entries = active_entries();
  RC_PRE(!entries.empty());
  const CatalogEntry* e = *rc::gen::elementOf(entries);
  const auto seed = *rc::gen::arbitrary<std::uint64_t>();
  RC_LOG() << e->id << " " << e->slug << " seed=" << seed << "\n";
  const OpContract* c = find_op_contract(e->op);
  RC_ASSERT(c != nullptr);
  for (const char* which : {"erroneousExample", "fixedExample"}) {
    const auto& example = e->record.at(which);
    BuiltExample ex = build_example(example);
    refill(ex, example, seed);
    const ContractVerdict v = judge_contract(ex.bag, c->op, ex.options);
    RC_LOG() << which << ": check=" << v.check_id << " validate=" << v.validate_id << " other=" << v.other << "\n";
    RC_ASSERT(v.other.empty());
    RC_ASSERT(v.check_id == v.validate_id);
    const bool erroneous = std::string(which) == "erroneousExample";
    if (e->severity == Severity::error) {
      RC_ASSERT(v.check_id == (erroneous ? e->id : std::string()));
    } else {  // a warning never throws; validate reports it, and only for the erroneous example
      RC_ASSERT(v.check_id.empty());
      bool reported = false;
      for (const auto& d : c->validate(ex.bag, ex.options)) reported = reported || d.id == e->id;
      RC_ASSERT(reported == erroneous);
    }
  }
}

// One random corruption of a tensor, scalar or flag; storage for new tensors goes into `keep`.
// `extreme` is set when a finite but huge value went in (1e6 in a tensor, 1e30 as a scalar): the
// contracts accept finite data, and exp() of a log-decay of 1e6 overflows however right the op is.
void mutate(ArgBag& bag, std::vector<std::unique_ptr<Tensor>>& keep, std::string& what, bool& extreme) {
  const int kind = *rc::gen::inRange(0, 8);
  if (kind == 6 && !bag.scalars.empty()) {
    auto it = std::next(bag.scalars.begin(), *rc::gen::inRange<long>(0, static_cast<long>(bag.scalars.size())));
    it->second = *rc::gen::element(std::numeric_limits<double>::quiet_NaN(), std::numeric_limits<double>::infinity(),
                                   -1.0, 0.0, 1e30, 3.0);
    extreme = extreme || it->second == 1e30;
    what += " scalar " + it->first + "=" + std::to_string(it->second);
    return;
  }
  if (kind == 7 && !bag.flags.empty()) {
    auto it = std::next(bag.flags.begin(), *rc::gen::inRange<long>(0, static_cast<long>(bag.flags.size())));
    it->second = !it->second;
    what += " flag " + it->first;
    return;
  }
  auto it = std::next(bag.tensors.begin(), *rc::gen::inRange<long>(0, static_cast<long>(bag.tensors.size())));
  TensorView& v = it->second;
  const Device dev = v.device;
  Shape shape = v.shape();
  DType dtype = v.dtype;
  Shape strides;
  switch (kind) {
    case 0:
      dtype = *rc::gen::elementOf(std::vector<DType>(std::begin(kAllDTypes), std::end(kAllDTypes)));
      break;
    case 1:
      if (!shape.empty()) {
        auto& d = shape[static_cast<std::size_t>(*rc::gen::inRange<long>(0, static_cast<long>(shape.size())))];
        d = std::max<std::int64_t>(0, d + *rc::gen::element<std::int64_t>(-1, 1, 2));
      }
      break;
    case 2:
      if (shape.size() < kMaxRank && *rc::gen::arbitrary<bool>()) shape.push_back(1);
      else if (!shape.empty()) shape.pop_back();
      break;
    case 3:
      // Padded innermost stride: same logical values, not contiguous.
      strides.assign(shape.size(), 0);
      for (std::int64_t i = static_cast<std::int64_t>(shape.size()) - 1, s = 2; i >= 0; --i) {
        strides[static_cast<std::size_t>(i)] = s;
        s *= std::max<std::int64_t>(1, shape[static_cast<std::size_t>(i)]);
      }
      break;
    case 4:
      v.device = *rc::gen::element(Device::cpu(), Device::cuda(1));
      what += " device " + it->first + "=" + v.device.str();
      return;
    default: {  // one element set to a hostile value
      if (v.numel() == 0) return;
      const std::int64_t i = *rc::gen::inRange<std::int64_t>(0, v.numel());
      const double val = is_floating(v.dtype)
                             ? *rc::gen::element(std::numeric_limits<double>::quiet_NaN(), -std::numeric_limits<double>::infinity(), 1e6)
                             : static_cast<double>(*rc::gen::inRange<std::int64_t>(-3, 70000));
      v.with_device(Device::cpu()).store_flat(i, val);
      extreme = extreme || val == 1e6;
      what += " value " + it->first + "[" + std::to_string(i) + "]=" + std::to_string(val);
      return;
    }
  }
  auto t = std::make_unique<Tensor>(strides.empty() ? Tensor(dtype, shape) : Tensor::strided(dtype, shape, strides));
  if (is_floating(dtype)) t->fill_normal(*rc::gen::arbitrary<std::uint64_t>(), 0.0, 0.5);
  else t->fill_int(*rc::gen::arbitrary<std::uint64_t>(), 0, 2);
  // Keep the old contents where the shapes agree, so index data stays meaningful.
  if (t->shape() == v.shape()) copy_convert(v.with_device(Device::cpu()), t->view());
  what += " " + it->first + "->" + std::string(dtype_name(dtype)) + py_tuple(shape) + (strides.empty() ? "" : " strided");
  v = t->view_on(dev);
  keep.push_back(std::move(t));
}

void mutations_are_consistent() {
  const auto& ops = op_contracts();
  const OpContract& c = *rc::gen::elementOf(std::vector<OpContract>(ops.begin(), ops.end()));
  nlohmann::json base;
  for (const auto& [name, fx] : embedded_fixtures().items())
    if (fx.value("op", "") == c.op && name.find("minimal") != std::string::npos) base = {{"fixture", name}, {"set", nlohmann::json::object()}};
  RC_PRE(!base.is_null());
  BuiltExample ex = build_example(base);
  ex.options = ValidateOptions::strict(Entry::cuda_kernel);
  std::vector<std::unique_ptr<Tensor>> keep;
  std::string what;
  const int n = *rc::gen::inRange(1, 4);
  bool extreme = false;
  for (int i = 0; i < n; ++i) mutate(ex.bag, keep, what, extreme);
  RC_LOG() << c.op << ":" << what << "\n";
  const ContractVerdict v = judge_contract(ex.bag, c.op, ex.options);
  RC_LOG() << "check=" << v.check_id << " validate=" << v.validate_id << " other=" << v.other << "\n";
  RC_ASSERT(v.other.empty());
  RC_ASSERT(v.check_id == v.validate_id);
  if (!v.check_id.empty()) {
    const CatalogEntry* e = Catalog::embedded().by_id(v.check_id);
    RC_ASSERT(e != nullptr);
    RC_ASSERT(e->op.substr(0, e->op.find('/')) == std::string(c.op.substr(0, c.op.find('/'))));
    return;
  }
  // Accepted by the strictest contract: the reference must run, and (unless a huge finite value went
  // in) produce finite outputs: a NaN or Inf the contract let through sits where the op never reads.
  for (auto& [name, view] : ex.bag.tensors) view = view.with_device(Device::cpu());
  ops::run_reference(c.op, ex.bag, reference::Precision::faithful, ValidateOptions::strict(Entry::reference));
  if (extreme) return note_early_return("a huge finite value went in: output finiteness not checked");
  // A token with no selected key and a -inf sink has lse = -inf (sparse_attention.md, the empty
  // softmax): the one non-finite value an accepted call may produce.
  if (const TensorView* lse = ex.bag.tensor("lse"); lse != nullptr && ex.bag.flag("return_lse")) {
    bool ok = true;
    for_each_element(*lse, [&](std::span<const std::int64_t> i, std::int64_t) {
      const double x = lse->load(i);
      ok = ok && (std::isfinite(x) || x == -std::numeric_limits<double>::infinity());
    });
    if (!ok) RC_FAIL("an accepted call gave a NaN or +inf lse");
  }
  // The outputs this call writes, as the op table says (issue 32): kda/chunk writes final_state only
  // with output_final_state, so a buffer passed without it keeps whatever it held, a NaN included.
  // The in-place state pools are not pure outputs; their updated slots are checked below.
  const ops::OpInfo& info = ops::op_info(c.op);
  const auto pure = info.pure_outputs();
  for (const std::string& out : info.written_by(ex.bag)) {
    if (out == "lse" || std::find(pure.begin(), pure.end(), out) == pure.end()) continue;
    if (!all_finite(*ex.bag.tensor(out))) {
      RC_LOG() << "non-finite " << out << "\n";
      RC_FAIL("an accepted call gave a non-finite output");
    }
  }
  // The decode ops update their state pool in place: the slots the rows name must stay finite;
  // the others are never read or written, so whatever they hold (a NaN included) is not the op's.
  const TensorView* pool = ex.bag.tensor("initial_state");
  const TensorView* slots = ex.bag.tensor("ssm_state_indices");
  if (pool == nullptr || slots == nullptr) return;
  for (std::int64_t r = 0; r < slots->numel(); ++r) {
    const std::int64_t s = slots->load_int(std::array<std::int64_t, 1>{r});
    if (s < 0 || s >= pool->size(0)) continue;
    if (!all_finite(pool->select(0, s))) {
      RC_LOG() << "non-finite initial_state slot " << s << " (row " << r << ")\n";
      RC_FAIL("an accepted call left a non-finite state in a slot it updates");
    }
  }
}

// A valid call of `op`: the op's generator when it has one, else one of the catalog's base fixtures
// with fresh values.
Call draw_valid(const std::string& op) {
  const OpFuzzSpec* spec = nullptr;
  for (const auto& s : op_specs())
    if (s.op == op) spec = &s;
  if (spec) return spec->draw(GenConfig{});
  const auto names = fixture_names(op);
  RC_PRE(!names.empty());
  return fixture_call(*rc::gen::elementOf(names), *rc::gen::arbitrary<std::uint64_t>());
}

std::string verdict_text(const ContractVerdict& v) {
  return "check=" + (v.check_id.empty() ? std::string("-") : v.check_id) +
         " validate=" + (v.validate_id.empty() ? std::string("-") : v.validate_id) + (v.other.empty() ? "" : " other=" + v.other);
}

// Both entry points see a valid call as valid: the host reference (CPU tensors) and the CUDA
// kernel (the same tensors labelled as one CUDA device), with every optional check on.
void valid_calls_validate_cleanly(const std::string& op) {
  const Call call = draw_valid(op);
  record_call(call);
  RC_LOG() << call.description << "\n";
  for (const Entry entry : {Entry::reference, Entry::cuda_kernel}) {
    const Mutant m(call, entry == Entry::reference ? Device::cpu() : Device::cuda(0));
    const ContractVerdict v = judge_contract(m.bag(), op, ValidateOptions::strict(entry));
    RC_LOG() << (entry == Entry::reference ? "reference: " : "cuda kernel: ") << verdict_text(v) << "\n";
    RC_ASSERT(v.clean());
  }
}

// One drawn call, one mutation of its op (the first, from a drawn start, that can be expressed on
// this call): exactly that id first, from check() and validate().
void mutation_fires_its_id(const std::string& op, const std::vector<Mutation>& table) {
  const Call call = draw_valid(op);
  const std::size_t start = *rc::gen::inRange<std::size_t>(0, table.size());
  const std::uint64_t salt = *rc::gen::arbitrary<std::uint64_t>();
  const Mutant valid(call);
  for (std::size_t k = 0; k < table.size(); ++k) {
    const Mutation& m = table[(start + k) % table.size()];
    Mutant mutated = valid;
    if (!apply(mutated, m, salt)) continue;
    // A dump holds a plain Call: a device label or an alias would be lost, and the replay would pass.
    if (mutated.plain()) record_call(mutated.call);
    RC_LOG() << m.slug << " (" << m.id << "): " << m.what << ", salt " << salt << "\n" << call.description << "\n";
    const std::string why = check_fires(valid, mutated, m);
    RC_LOG() << why << "\n";
    RC_ASSERT(why.empty());
    return;
  }
  RC_DISCARD("no mutation of " + op + " can be expressed on this call");
}

}  // namespace

std::vector<Property> hostile_properties() {
  std::vector<Property> props = {
      {"catalog/examples-fire-exactly-their-id-on-fresh-data", "hostile", examples_fire_on_fresh_data},
      {"contracts/mutations-get-one-documented-id", "hostile", mutations_are_consistent},
  };
  for (const auto& c : op_contracts()) {
    const std::string op(c.op);
    Property valid{"contracts/" + op + "/valid-calls-validate-cleanly", "contracts", [op] { valid_calls_validate_cleanly(op); }};
    valid.op = op;
    props.push_back(std::move(valid));
    auto table = mutations_for(op);
    if (table.empty()) continue;
    Property fires{"contracts/" + op + "/mutation-fires-its-id", "contracts",
                   [op, table = std::move(table)] { mutation_fires_its_id(op, table); }};
    fires.op = op;
    props.push_back(std::move(fires));
  }
  return props;
}

}  // namespace kparity::fuzz
