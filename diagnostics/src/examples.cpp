#include "kparity/diagnostics/examples.hpp"

#include <cmath>
#include <limits>
#include <map>
#include <set>

#include "util.hpp"

namespace kparity {
namespace {

using nlohmann::json;

[[noreturn]] void bad(const std::string& where, const std::string& why) { throw CatalogError("example: " + where + ": " + why); }

double number_of(const json& v, const std::string& where) {
  if (v.is_number()) return v.get<double>();
  if (v.is_string()) {
    const auto s = v.get<std::string>();
    if (s == "nan") return std::numeric_limits<double>::quiet_NaN();
    if (s == "inf" || s == "+inf") return std::numeric_limits<double>::infinity();
    if (s == "-inf") return -std::numeric_limits<double>::infinity();
  }
  if (v.is_boolean()) return v.get<bool>() ? 1.0 : 0.0;
  bad(where, "expected a number or \"nan\"/\"inf\"/\"-inf\", got " + v.dump());
}

std::vector<std::int64_t> int_list(const json& v, const std::string& where, bool allow_negative) {
  if (!v.is_array()) bad(where, "expected a list of integers, got " + v.dump());
  std::vector<std::int64_t> out;
  for (const auto& x : v) {
    if (!x.is_number_integer() || (!allow_negative && x.get<std::int64_t>() < 0))
      bad(where, "expected a list of " + std::string(allow_negative ? "" : "non-negative ") + "integers, got " + v.dump());
    out.push_back(x.get<std::int64_t>());
  }
  return out;
}

// Index and cursor tensors get zeros, not noise: random integers would trip index checks by accident.
void default_fill(const TensorView& v, const std::string& name) {
  if (!is_floating(v.dtype)) return;
  Rng rng(detail::fnv1a(name));
  for (std::int64_t i = 0; i < v.numel(); ++i) v.store_flat(i, 0.5 * rng.normal());
}

std::unique_ptr<Tensor> build_tensor(const std::string& name, const json& spec, bool values_overridden) {
  const std::string where = "tensor `" + name + "`";
  if (!spec.is_object()) bad(where, "expected an object with shape and dtype");
  for (const auto& [k, _] : spec.items()) {
    static const std::set<std::string> known = {"shape", "dtype", "device", "strides", "offset", "values", "fill", "alias", "doc"};
    if (!known.count(k)) bad(where, "unknown field `" + k + "`");
  }
  if (!spec.contains("shape") || !spec.contains("dtype")) bad(where, "needs shape and dtype");
  const Shape shape = int_list(spec["shape"], where + ".shape", false);
  if (shape.size() > static_cast<std::size_t>(kMaxRank)) bad(where + ".shape", "rank above 6");
  const auto dtype = spec["dtype"].is_string() ? parse_dtype(spec["dtype"].get<std::string>()) : std::nullopt;
  if (!dtype) bad(where + ".dtype", "unknown dtype " + spec["dtype"].dump());
  if (spec.contains("offset") && !spec["offset"].is_number_integer()) bad(where + ".offset", "expected an integer");
  const std::int64_t offset = spec.value("offset", std::int64_t{0});
  if (offset < 0) bad(where + ".offset", "must be non-negative");

  std::unique_ptr<Tensor> t;
  try {
    if (spec.contains("strides")) {
      const Shape strides = int_list(spec["strides"], where + ".strides", true);
      if (strides.size() != shape.size()) bad(where + ".strides", "needs one stride per dimension");
      std::int64_t lo = offset, hi = offset, numel = 1;
      for (std::size_t d = 0; d < shape.size(); ++d) {
        numel *= shape[d];
        const std::int64_t reach = (shape[d] > 0 ? shape[d] - 1 : 0) * strides[d];
        (reach < 0 ? lo : hi) += reach;
      }
      if (lo < 0) bad(where + ".strides", "negative strides reach before the storage; raise .offset");
      t = std::make_unique<Tensor>(Tensor::strided(*dtype, shape, strides, offset, numel == 0 ? offset : hi + 1));
    } else if (offset != 0) {
      Shape strides(shape.size(), 1);
      for (int d = static_cast<int>(shape.size()) - 2; d >= 0; --d) strides[d] = strides[d + 1] * std::max<std::int64_t>(shape[d + 1], 1);
      std::int64_t numel = 1;
      for (auto s : shape) numel *= s;
      t = std::make_unique<Tensor>(Tensor::strided(*dtype, shape, strides, offset, offset + numel));
    } else {
      t = std::make_unique<Tensor>(*dtype, shape);
    }
  } catch (const std::invalid_argument& ex) {
    bad(where, ex.what());
  }

  const TensorView v = t->view();
  const bool integral = !is_floating(*dtype);
  auto store = [&](std::int64_t i, double x, const std::string& w) {
    if (integral && !std::isfinite(x)) bad(w, "a non-finite value in a " + std::string(dtype_name(*dtype)) + " tensor");
    v.store_flat(i, x);
  };
  if (spec.contains("values")) {
    const json& vals = spec["values"];
    if (!vals.is_array()) bad(where + ".values", "expected a list");
    const auto n = static_cast<std::int64_t>(vals.size());
    // A fixture's values follow a shape override by cycling, so "x.shape" alone is a valid
    // override; values written in the example itself must fit exactly.
    if (n != v.numel() && (values_overridden || n == 0))
      bad(where + ".values", std::to_string(n) + " values for " + std::to_string(v.numel()) + " elements");
    for (std::int64_t i = 0; i < v.numel(); ++i) store(i, number_of(vals[i % n], where + ".values"), where + ".values");
  } else if (spec.contains("fill")) {
    const double x = number_of(spec["fill"], where + ".fill");
    for (std::int64_t i = 0; i < v.numel(); ++i) store(i, x, where + ".fill");
  } else {
    default_fill(v, name);
  }
  return t;
}

// `<tensor>.alias: "<other>"` makes the tensor a view of the other one's memory (its own shape,
// dtype and strides, starting at the other's first element), for the overlap checks. It is never
// filled: writing through it would change the other tensor's values.
TensorView alias_view(const std::string& name, const json& spec, const std::map<std::string, const Tensor*>& owners,
                      Device device) {
  const std::string where = "tensor `" + name + "`.alias";
  if (!spec["alias"].is_string()) bad(where, "expected the name of another tensor");
  const std::string target = spec["alias"].get<std::string>();
  auto it = owners.find(target);
  if (it == owners.end()) bad(where, "no tensor `" + target + "` to alias (an alias of an alias is not supported)");
  if (!spec.contains("shape") || !spec.contains("dtype")) bad("tensor `" + name + "`", "needs shape and dtype");
  const Shape shape = int_list(spec["shape"], "tensor `" + name + "`.shape", false);
  const auto dtype = spec["dtype"].is_string() ? parse_dtype(spec["dtype"].get<std::string>()) : std::nullopt;
  if (!dtype) bad("tensor `" + name + "`.dtype", "unknown dtype " + spec["dtype"].dump());
  Shape strides(shape.size(), 1);
  for (int d = static_cast<int>(shape.size()) - 2; d >= 0; --d) strides[d] = strides[d + 1] * std::max<std::int64_t>(shape[d + 1], 1);
  if (spec.contains("strides")) strides = int_list(spec["strides"], "tensor `" + name + "`.strides", false);
  if (strides.size() != shape.size()) bad("tensor `" + name + "`.strides", "needs one stride per dimension");
  const Tensor& owner = *it->second;
  std::byte* begin = static_cast<std::byte*>(owner.view().data);
  const std::byte* end = owner.storage().data() + owner.storage().size();
  TensorView v(begin, *dtype, shape, strides, device);
  const std::int64_t hi = v.offset_range().second;
  if (v.numel() > 0 && begin + (hi + 1) * static_cast<std::int64_t>(dtype_size(*dtype)) > end)
    bad(where, "the view reaches past the memory of `" + target + "`");
  return v;
}

ValidateOptions parse_options(const json& o) {
  ValidateOptions opt;
  if (o.is_null()) return opt;
  if (!o.is_object()) bad("options", "expected an object");
  for (const auto& [k, v] : o.items()) {
    if (k == "extra" || k == "deep" || k == "warnings" || k == "deep_pass_follows") {
      if (!v.is_boolean()) bad("options." + k, "expected true or false");
      bool& flag = k == "extra" ? opt.extra : k == "deep" ? opt.deep : k == "warnings" ? opt.warnings : opt.deep_pass_follows;
      flag = v.get<bool>();
    } else if (k == "entry") {
      const auto e = v.is_string() ? v.get<std::string>() : std::string();
      if (e == "reference") opt.entry = Entry::reference;
      else if (e == "cuda_kernel") opt.entry = Entry::cuda_kernel;
      else bad("options.entry", "expected \"reference\" or \"cuda_kernel\", got " + v.dump());
    } else {
      bad("options", "unknown option `" + k + "`");
    }
  }
  return opt;
}

}  // namespace

BuiltExample build_example(const json& example, const json& fixtures) {
  if (!example.is_object()) bad("", "an example must be an object");
  for (const auto& [k, _] : example.items())
    if (k != "fixture" && k != "set" && k != "options" && k != "doc") bad(k, "unknown key");
  if (!example.contains("fixture") || !example["fixture"].is_string()) bad("fixture", "missing fixture name");
  const std::string fname = example["fixture"].get<std::string>();
  if (!fixtures.is_object() || !fixtures.contains(fname)) bad("fixture", "unknown fixture '" + fname + "'");
  const json& fx = fixtures[fname];

  json tensors = fx.value("tensors", json::object());
  json scalars = fx.value("scalars", json::object());
  json flags = fx.value("flags", json::object());
  std::set<std::string> values_overridden;

  const json set = example.value("set", json::object());
  if (!set.is_object()) bad("set", "expected an object");
  for (const auto& [key, val] : set.items()) {
    const std::string where = "set `" + key + "`";
    const auto dot = key.find('.');
    const std::string head = key.substr(0, dot);
    const std::string field = dot == std::string::npos ? std::string() : key.substr(dot + 1);
    if (head == "scalars" || head == "flags") {
      if (field.empty()) bad(where, "needs a name after the dot");
      json& table = head == "scalars" ? scalars : flags;
      if (val.is_null()) table.erase(field);
      else if (head == "scalars" && (val.is_number() || val.is_string())) table[field] = number_of(val, where);
      else if (head == "flags" && val.is_boolean()) table[field] = val;
      else bad(where, head == "scalars" ? "expected a number or null" : "expected true or false");
      continue;
    }
    if (field.empty()) {
      if (val.is_null()) {
        if (!tensors.contains(head)) bad(where, "no tensor `" + head + "` to remove");
        tensors.erase(head);
      } else if (val.is_object()) {
        tensors[head] = val;
        if (val.contains("values")) values_overridden.insert(head);
      } else {
        bad(where, "a tensor takes null (remove) or a full spec object");
      }
      continue;
    }
    if (!tensors.contains(head)) bad(where, "fixture '" + fname + "' has no tensor `" + head + "`");
    static const std::set<std::string> fields = {"dtype", "shape", "strides", "offset", "device", "values", "fill", "alias"};
    if (!fields.count(field)) bad(where, "unknown tensor field `" + field + "`");
    json& spec = tensors[head];
    spec[field] = val;
    if (field == "shape" && !set.contains(head + ".strides")) spec.erase("strides");
    if (field == "values") {
      spec.erase("fill");
      values_overridden.insert(head);
    }
    if (field == "fill") spec.erase("values");
  }

  BuiltExample out;
  out.op = fx.value("op", std::string());
  out.options = parse_options(example.value("options", json()));
  auto device_of = [](const std::string& name, const json& spec) {
    const std::string dev = spec.value("device", std::string("cpu"));
    const auto device = Device::parse(dev);
    if (!device) bad("tensor `" + name + "`.device", "unknown device '" + dev + "'");
    return *device;
  };
  std::map<std::string, const Tensor*> owners;
  for (const auto& [name, spec] : tensors.items()) {
    if (spec.is_object() && spec.contains("alias")) continue;
    auto t = build_tensor(name, spec, values_overridden.count(name) > 0);
    out.bag.tensors.emplace(name, t->view_on(device_of(name, spec)));
    owners.emplace(name, t.get());
    out.storage.push_back(std::move(t));
  }
  // Aliases last: they need the memory of the tensor they alias.
  for (const auto& [name, spec] : tensors.items())
    if (spec.is_object() && spec.contains("alias")) out.bag.tensors.emplace(name, alias_view(name, spec, owners, device_of(name, spec)));
  for (const auto& [name, v] : scalars.items()) {
    out.bag.scalars.emplace(name, number_of(v, "scalars." + name));
  }
  for (const auto& [name, v] : flags.items()) {
    if (!v.is_boolean()) bad("flags." + name, "expected true or false");
    out.bag.flags.emplace(name, v.get<bool>());
  }
  return out;
}

}  // namespace kparity
