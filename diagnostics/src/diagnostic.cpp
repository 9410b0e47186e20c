#include "kparity/diagnostics/diagnostic.hpp"

#include <algorithm>
#include <array>
#include <utility>

#include <nlohmann/json.hpp>

#include "kparity/diagnostics/catalog.hpp"
#include "kparity/diagnostics/errors.hpp"
#include "util.hpp"

namespace kparity {
namespace {

constexpr std::array<std::pair<ErrorClass, std::string_view>, 8> kClassNames = {{
    {ErrorClass::ValueError, "ValueError"},
    {ErrorClass::RuntimeError, "RuntimeError"},
    {ErrorClass::IndexError, "IndexError"},
    {ErrorClass::TypeError, "TypeError"},
    {ErrorClass::NotImplementedError, "NotImplementedError"},
    {ErrorClass::AssertionError, "AssertionError"},
    {ErrorClass::ZeroDivisionError, "ZeroDivisionError"},
    {ErrorClass::InternalError, "InternalError"},
}};

// The entry behind a diagnostic, if the active catalog has it: help lines and the footer come
// from the catalog, never from the diagnostic, so they cannot drift from `kparity explain`.
const CatalogEntry* entry_of(const Diagnostic& d) {
  return d.id.empty() ? nullptr : active_catalog().by_id(d.id);
}

}  // namespace

std::string_view error_class_name(ErrorClass c) noexcept {
  for (const auto& [k, name] : kClassNames)
    if (k == c) return name;
  return "InternalError";
}

bool parse_error_class(std::string_view s, ErrorClass& out) noexcept {
  for (const auto& [k, name] : kClassNames) {
    if (name == s) {
      out = k;
      return true;
    }
  }
  return false;
}

std::string_view severity_name(Severity s) noexcept {
  switch (s) {
    case Severity::error: return "error";
    case Severity::warning: return "warning";
    case Severity::note: return "note";
  }
  return "error";
}

Diagnostic& Diagnostic::add_context(std::string frame) {
  context.push_back(std::move(frame));
  return *this;
}

std::string render_template(std::string_view t, const std::vector<DiagArg>& args) {
  std::string out;
  out.reserve(t.size());
  for (std::size_t i = 0; i < t.size(); ++i) {
    const char c = t[i];
    if ((c == '{' || c == '}') && i + 1 < t.size() && t[i + 1] == c) {
      out += c;
      ++i;
      continue;
    }
    if (c == '{') {
      const auto close = t.find('}', i + 1);
      if (close != std::string_view::npos) {
        const std::string_view name = t.substr(i + 1, close - i - 1);
        auto it = std::find_if(args.begin(), args.end(), [&](const DiagArg& a) { return a.name == name; });
        if (it != args.end()) {
          out += it->value;
          i = close;
          continue;
        }
      }
    }
    out += c;
  }
  return out;
}

Diagnostic make_diagnostic(std::string_view id, std::string location, std::vector<DiagArg> args,
                           std::vector<std::string> notes) {
  const CatalogEntry* e = active_catalog().by_id(id);
  if (!e) throw_internal("a contract named catalog id '" + std::string(id) + "', which the catalog does not have");
  Diagnostic d;
  d.id = e->id;
  d.slug = e->slug;
  d.op = e->op;
  d.argument = e->argument;
  d.error_class = e->error_class;
  d.severity = e->severity;
  d.message_template = e->message_template.empty() ? e->error_message : e->message_template;
  d.message = render_template(d.message_template, args);
  d.args = std::move(args);
  d.location = std::move(location);
  d.notes = std::move(notes);
  return d;
}

std::string Diagnostic::render_text() const {
  std::string out(severity_name(severity));
  if (!id.empty()) out += "[" + id + "]";
  out += ": " + message + "\n";
  if (!location.empty()) out += "  --> " + location + "\n";
  for (const auto& n : notes) out += "   = note: " + n + "\n";
  for (const auto& f : context) out += "   = note: " + f + "\n";
  if (const CatalogEntry* e = entry_of(*this)) {
    for (const auto& s : detail::json_str_list(e->record, "solutions")) out += "   = help: " + s + "\n";
    if (e->documented()) out += "For more information, run `kparity explain " + id + "`.\n";
  }
  return out;
}

std::string Diagnostic::render_json() const {
  using oj = nlohmann::ordered_json;
  const CatalogEntry* e = entry_of(*this);
  oj j;
  j["$message_type"] = "diagnostic";
  j["schema_version"] = 1;
  j["id"] = id;
  j["slug"] = slug;
  j["level"] = severity_name(severity);
  j["error_class"] = error_class_name(error_class);
  j["op"] = op;
  j["argument"] = argument;
  j["message"] = message;
  j["template"] = message_template;
  oj a = oj::object();
  for (const auto& arg : args) a[arg.name] = arg.value;
  j["args"] = std::move(a);
  j["location"] = location;
  j["source_location"] = nullptr;
  j["notes"] = notes;
  j["context"] = context;
  oj fixes = oj::array();
  if (e)
    for (const auto& s : detail::json_str_list(e->record, "solutions"))
      fixes.push_back({{"text", s}, {"applicability", "unspecified"}});
  j["fixes"] = std::move(fixes);
  if (e && e->origin == "upstream") {
    const auto& r = e->record;
    j["upstream"] = {{"repo", detail::json_str(r, "repo")},
                     {"path", detail::json_str(r, "filePath")},
                     {"commit", detail::json_str(r, "analyzedSha")},
                     {"line", r.contains("lineNumber") ? oj(r["lineNumber"]) : oj(nullptr)},
                     {"error_class", error_class_name(e->error_class)}};
  } else {
    j["upstream"] = nullptr;
  }
  j["rendered"] = render_text();
  return j.dump();
}

}  // namespace kparity
