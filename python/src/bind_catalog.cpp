// The catalog from Python: look-ups, explain pages, and the executable examples (for the tests,
// which rebuild every example as framework tensors).
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/string_view.h>
#include <nanobind/stl/vector.h>

#include "bindings.hpp"
#include "errors.hpp"
#include "kparity/diagnostics/catalog.hpp"
#include "kparity/diagnostics/examples.hpp"
#include "kparity/diagnostics/explain.hpp"
#include "kparity/diagnostics/search.hpp"

namespace kparity::py {
namespace {

const CatalogEntry& entry_or_raise(std::string_view id) {
  if (const CatalogEntry* e = active_catalog().by_id(id)) return *e;
  throw nb::key_error(("no catalog entry with id " + std::string(id)).c_str());
}

std::vector<const CatalogEntry*> entries_of(const std::vector<std::string>& ids) {
  std::vector<const CatalogEntry*> out;
  for (const auto& id : ids) out.push_back(&entry_or_raise(id));
  return out;
}

// A built example as plain data: per tensor its whole storage (bytes, as a uint8 array owned by
// the example, shared by aliases), byte offset, shape, strides, dtype and device; the scalars, flags and options.
nb::dict example_data(const std::string& example_json) {
  auto ex = std::make_shared<BuiltExample>(build_example(nlohmann::json::parse(example_json)));
  nb::dict tensors;
  // Map each view back to the storage that holds it.
  for (const auto& [name, view] : ex->bag.tensors) {
    const Tensor* owner = nullptr;
    std::size_t owner_index = 0;
    for (const auto& t : ex->storage) {
      const auto* lo = t->storage().data();
      const auto* hi = lo + t->storage().size();
      const auto* p = static_cast<const std::byte*>(view.data);
      if ((p >= lo && p < hi) || (p == lo && t->storage().empty())) {
        owner = t.get();
        break;
      }
      ++owner_index;
    }
    if (!owner) throw std::logic_error("example tensor `" + name + "` outside every storage");
    const std::size_t nbytes = owner->storage().size();
    const std::int64_t byte_offset = static_cast<const std::byte*>(view.data) - owner->storage().data();
    auto* keep = new std::shared_ptr<BuiltExample>(ex);
    nb::capsule cap(keep, [](void* p) noexcept { delete static_cast<std::shared_ptr<BuiltExample>*>(p); });
    std::size_t shape[1] = {nbytes};
    nb::ndarray<nb::array_api, std::uint8_t> bytes(const_cast<std::byte*>(owner->storage().data()), 1, shape, cap);
    nb::dict t;
    t["storage"] = bytes;
    t["storage_id"] = owner_index;  // aliases share their target's storage
    t["byte_offset"] = byte_offset;
    t["shape"] = view.shape();
    t["strides"] = view.stride_vec();
    t["dtype"] = std::string(dtype_name(view.dtype));
    t["device"] = view.device.str();
    tensors[nb::str(name.c_str())] = t;
  }
  nb::dict scalars, flags, options;
  for (const auto& [k, v] : ex->bag.scalars) scalars[nb::str(k.c_str())] = v;
  for (const auto& [k, v] : ex->bag.flags) flags[nb::str(k.c_str())] = v;
  options["entry"] = ex->options.entry == Entry::reference ? "reference" : "kernel";
  options["extra"] = ex->options.extra;
  options["deep"] = ex->options.deep;
  options["warnings"] = ex->options.warnings;
  nb::dict out;
  out["op"] = ex->op;
  out["tensors"] = tensors;
  out["scalars"] = scalars;
  out["flags"] = flags;
  out["options"] = options;
  return out;
}

}  // namespace

void bind_catalog(nb::module_& m) {
  m.def("catalog_ids", [] {
    std::vector<std::string> ids;
    for (const auto& e : active_catalog().entries()) ids.push_back(e.id);
    return ids;
  });
  m.def("catalog_record", [](std::string_view id) { return entry_or_raise(id).record.dump(); },
        "The catalog record of `id` as JSON text.");
  m.def(
      "catalog_lookup",
      [](std::string_view q) -> std::optional<std::string> {
        if (const CatalogEntry* e = active_catalog().lookup(q)) return e->id;
        return std::nullopt;
      },
      "The id of the entry whose id, slug or message pattern matches `q` exactly, else None.");
  m.def("catalog_by_message", [](std::string_view text) {
    std::vector<std::string> ids;
    for (const CatalogEntry* e : active_catalog().by_message(text)) ids.push_back(e->id);
    return ids;
  });
  m.def("catalog_suggest", [](std::string_view q, std::size_t n) { return active_catalog().suggest(q, n); },
        nb::arg("query"), nb::arg("n") = 3);
  m.def("catalog_list", [](std::string_view op, std::string_view tag) {
    std::vector<std::string> ids;
    for (const CatalogEntry* e : active_catalog().list(op, tag)) ids.push_back(e->id);
    return ids;
  }, nb::arg("op") = "", nb::arg("tag") = "");
  m.def("explain_text", [](std::string_view id) { return explain_text(entry_or_raise(id), active_catalog()); });
  m.def("explain_markdown", [](const std::vector<std::string>& ids) {
    return markdown_index(entries_of(ids), active_catalog());
  });
  m.def("explain_sarif", [](const std::vector<std::string>& ids) { return sarif_log(entries_of(ids)).dump(2); });
  m.def("explain_json", [](std::string_view id) { return explain_json(entry_or_raise(id)).dump(2); });
  m.def(
      "catalog_search",
      [](std::string_view text, std::size_t limit) {
        nb::list hits;
        for (const SearchHit& h : search(active_catalog(), text, limit))
          hits.append(nb::make_tuple(h.entry->id, h.score, h.reason));
        return hits;
      },
      nb::arg("text"), nb::arg("limit") = 5, "Ranked search (diagnostics/search.hpp): [(id, score, reason)], best first.");
  m.def("_fixtures_json", [] { return embedded_fixtures().dump(); });
  m.def("_build_example", [](const std::string& example_json) {
    return translate([&] { return example_data(example_json); });
  }, "An executable example built by the C++ builder, as plain data (tests rebuild it as framework tensors).");
}

}  // namespace kparity::py
