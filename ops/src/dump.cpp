// Dump ↔ ArgBag, per the convention in dump.hpp.
#include "kparity/ops/dump.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdlib>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "kparity/core/format.hpp"

namespace kparity::ops {
namespace {

// A dump name read as the ArgBag's, for aliases that set no flag (`o`, `use_qk_l2norm`).
std::string canonical_name(const OpInfo& op, const std::string& name) {
  for (const auto& a : op.aliases)
    if (a.sets_flag.empty() && a.dump_name == name) return std::string(a.name);
  return name;
}

const Alias* flag_alias(const OpInfo& op, const std::string& name) {
  for (const auto& a : op.aliases)
    if (!a.sets_flag.empty() && a.dump_name == name) return &a;
  return nullptr;
}

// "true"/"false" → flag, a decimal → scalar, "None" → absent. Anything else is an error.
void add_metadata(ArgBag& bag, const std::string& key, const std::string& value) {
  if (value == "None" || value == "none") return;
  if (value == "true" || value == "True") {
    bag.flags[key] = true;
    return;
  }
  if (value == "false" || value == "False") {
    bag.flags[key] = false;
    return;
  }
  errno = 0;
  char* end = nullptr;
  double d = std::strtod(value.c_str(), &end);  // accepts inf, -inf, nan
  if (value.empty() || end != value.c_str() + value.size() || errno == ERANGE) {
    throw DumpError(fmt::format(
        "__metadata__[\"{}\"] = \"{}\" is neither a decimal number nor true/false (write scalars with str(x), "
        "flags as \"true\"/\"false\", absent ones as \"None\")",
        key, value));
  }
  bag.scalars[key] = d;
}

}  // namespace

Dump load_dump(const std::filesystem::path& path_in) {
  const std::string path = path_in.string();
  Dump d;
  d.file = read_safetensors(path_in);
  auto op_it = d.file.metadata.find("op");
  if (op_it == d.file.metadata.end())
    throw DumpError(fmt::format("{}: __metadata__ has no \"op\" (one of {})", path, known_ops()));
  d.op = find_op(op_it->second);
  if (!d.op) throw DumpError(fmt::format("{}: unknown op \"{}\" (known: {})", path, op_it->second, known_ops()));
  const OpInfo& info = *d.op;

  for (const auto& [key, value] : d.file.metadata) {
    if (key == "op" || key == "format" || key.rfind("kparity.", 0) == 0) continue;
    add_metadata(d.bag, canonical_name(info, key), value);
  }

  std::map<std::string, const Tensor*> expected_raw;
  const auto arguments = info.tensors();
  for (auto& [name, tensor] : d.file.tensors) {
    if (name.rfind("expected.", 0) == 0) {
      expected_raw[canonical_name(info, name.substr(9))] = &tensor;
      continue;
    }
    std::string arg = canonical_name(info, name);
    if (const Alias* a = flag_alias(info, arg)) {
      if (d.file.tensors.count(std::string(a->name)))
        throw DumpError(fmt::format("{}: the dump has both `{}` ({}) and `{}` ({}); keep one", info.op, a->name,
                                    a->name_means, a->dump_name, a->dump_means));
      arg = a->name;
      d.bag.flags[std::string(a->sets_flag)] = true;
    }
    if (std::find(arguments.begin(), arguments.end(), arg) == arguments.end())
      d.warnings.push_back(fmt::format("tensor `{}` is not an argument of {}; ignored", name, info.op));
    else
      d.bag.tensors[arg] = tensor.view();
  }
  info.allocate(d.bag, d.allocated);

  for (const auto& [name, tensor] : expected_raw) {
    if (!info.writes(name))
      throw DumpError(fmt::format("expected.{}: {} writes no tensor `{}` (it writes: {})", name, info.op, name,
                                  fmt::join(info.written_names(), ", ")));
    d.expected[name] = tensor;
  }
  return d;
}

void save_dump(const std::filesystem::path& path, std::string_view op, const ArgBag& bag,
               const std::map<std::string, TensorView>& expected, const std::map<std::string, std::string>& info) {
  const OpInfo* row = find_op(op);
  if (row == nullptr) throw DumpError(fmt::format("unknown op \"{}\" (known: {})", op, known_ops()));
  std::map<std::string, TensorView> tensors = bag.tensors;
  for (const auto& [name, v] : expected) {
    if (!row->writes(name))
      throw DumpError(fmt::format("expected.{}: {} writes no tensor `{}` (it writes: {})", name, op, name,
                                  fmt::join(row->written_names(), ", ")));
    tensors.emplace("expected." + name, v);
  }
  std::map<std::string, std::string> meta{{"op", std::string(op)}};
  // py_float is the shortest round-trip spelling ("inf" and "nan" included), which the loader's
  // strtod reads back bit for bit.
  for (const auto& [name, v] : bag.scalars) meta[name] = py_float(v);
  for (const auto& [name, v] : bag.flags) meta[name] = v ? "true" : "false";
  for (const auto& [key, v] : info) meta["kparity." + key] = v;
  write_safetensors(path, tensors, meta);
}

}  // namespace kparity::ops
