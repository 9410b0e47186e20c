#include "kparity/diagnostics/explain.hpp"

#include <algorithm>
#include <map>
#include <set>

#include "util.hpp"

#ifndef KPARITY_VERSION_STRING
#define KPARITY_VERSION_STRING "0.1.0"
#endif

namespace kparity {
namespace {

using nlohmann::json;
using detail::json_str;
using detail::json_str_list;

std::string line_number(const json& rec) {
  auto it = rec.find("lineNumber");
  return it != rec.end() && it->is_number_integer() ? std::to_string(it->get<long long>()) : std::string();
}

std::vector<std::string> arg_names(const CatalogEntry& e) {
  std::vector<std::string> names;
  if (auto it = e.record.find("args"); it != e.record.end() && it->is_array())
    for (const auto& a : *it)
      if (a.is_object() && a.contains("name") && a["name"].is_string()) names.push_back(a["name"].get<std::string>());
  // Placeholders the args list forgot still get a position rather than turning literal.
  for (auto& p : detail::template_placeholders(e.message_template))
    if (std::find(names.begin(), names.end(), p) == names.end()) names.push_back(p);
  return names;
}

void section(std::string& out, std::string_view title, const std::string& body) {
  if (detail::trim(body).empty()) return;
  out += "\n";
  out += title;
  out += "\n\n";
  out += detail::trim(body);
  out += "\n";
}

std::string source_text(const CatalogEntry& e) {
  const auto& r = e.record;
  const std::string ref = json_str(r, "checkRef");
  std::string s;
  if (e.origin == "upstream") {
    const std::string path = json_str(r, "filePath");
    if (!path.empty()) {
      s += "Thrown at " + path;
      const std::string line = line_number(r);
      if (!line.empty()) s += ":" + line;
      s += " (" + json_str(r, "repo") + ")\n";
    }
    const std::string uri = json_str(r, "helpUri");
    const std::string sha = json_str(r, "analyzedSha");
    if (!uri.empty()) s += uri + (sha.empty() ? "" : " (pinned to " + sha.substr(0, 10) + ")") + "\n";
    if (!ref.empty()) s += "Spec: " + ref + "\n";
  } else {
    s += "A kparity check with no upstream counterpart";
    s += ref.empty() ? std::string(".") : "; spec item " + ref + ".";
    s += "\n";
    s += e.record.value("defaultEnabled", false) ? "On by default.\n"
                                                  : "Off by default: runs with ValidateOptions::extra";
    if (!e.record.value("defaultEnabled", false))
      s += e.record.value("dataDependent", false) ? " and deep (it reads tensor contents).\n" : ".\n";
  }
  s += "Op: " + e.op;
  if (!e.argument.empty()) s += ", argument " + e.argument;
  s += "\n";
  return s;
}

}  // namespace

std::vector<const CatalogEntry*> related_entries(const CatalogEntry& e, const Catalog& c) {
  std::vector<const CatalogEntry*> out;
  auto add = [&](const CatalogEntry* r) {
    if (r && r->id != e.id && std::find(out.begin(), out.end(), r) == out.end()) out.push_back(r);
  };
  for (const auto& id : json_str_list(e.record, "related")) add(c.by_id(id));
  // The checks just before and after this one in the op's order are the ones a caller trips next.
  std::vector<const CatalogEntry*> same_op;
  for (const auto& x : c.entries())
    if (x.op == e.op && x.status == "active") same_op.push_back(&x);
  auto it = std::find_if(same_op.begin(), same_op.end(), [&](const CatalogEntry* x) { return x->id == e.id; });
  if (it != same_op.end()) {
    const auto pos = it - same_op.begin();
    for (auto k = std::max<std::ptrdiff_t>(0, pos - 2); k < std::min<std::ptrdiff_t>(same_op.size(), pos + 3); ++k)
      add(same_op[k]);
  }
  return out;
}

namespace {

std::string bullets(const std::vector<std::string>& items, bool numbered) {
  std::string s;
  for (std::size_t i = 0; i < items.size(); ++i)
    s += (numbered ? std::to_string(i + 1) + ". " : std::string("• ")) + items[i] + "\n";
  return s;
}

std::string level_of(Severity s) { return std::string(severity_name(s)); }

json rule_of(const CatalogEntry& e) {
  const auto& r = e.record;
  json rule;
  rule["id"] = e.id;
  rule["name"] = e.slug;
  rule["shortDescription"] = {{"text", e.summary.empty() ? e.error_message : e.summary}};
  if (e.documented()) rule["fullDescription"] = {{"text", json_str(r, "documentation")}};
  rule["messageStrings"] = {{"default", {{"text", detail::positional_template(e.message_template, arg_names(e))}}}};
  std::string help;
  for (const auto& s : json_str_list(r, "solutions")) help += "- " + s + "\n";
  if (!help.empty()) rule["help"] = {{"text", help}};
  if (const std::string uri = json_str(r, "helpUri"); !uri.empty()) rule["helpUri"] = uri;
  rule["defaultConfiguration"] = {{"level", level_of(e.severity)}, {"enabled", r.value("defaultEnabled", true)}};
  if (auto d = json_str_list(r, "deprecatedIds"); !d.empty()) rule["deprecatedIds"] = d;
  json props = {{"errorClass", error_class_name(e.error_class)}, {"origin", e.origin}, {"op", e.op},
                {"argument", e.argument}, {"checkRef", json_str(r, "checkRef")}, {"status", e.status},
                {"tags", e.tags}};
  if (e.origin == "upstream")
    props["upstream"] = {{"repo", json_str(r, "repo")}, {"path", json_str(r, "filePath")},
                         {"commit", json_str(r, "analyzedSha")}, {"line", r.value("lineNumber", json())}};
  rule["properties"] = std::move(props);
  return rule;
}

json result_of(const Diagnostic& d, const std::map<std::string, std::size_t>& index,
               const std::vector<const CatalogEntry*>& rules) {
  json res;
  res["ruleId"] = d.id;
  std::vector<std::string> order;
  if (auto it = index.find(d.id); it != index.end()) {
    res["ruleIndex"] = it->second;
    order = arg_names(*rules[it->second]);
  } else {
    for (const auto& a : d.args) order.push_back(a.name);
  }
  res["level"] = level_of(d.severity);
  json arguments = json::array();
  for (const auto& name : order) {
    auto a = std::find_if(d.args.begin(), d.args.end(), [&](const DiagArg& x) { return x.name == name; });
    arguments.push_back(a == d.args.end() ? std::string() : a->value);
  }
  res["message"] = {{"text", d.message}, {"id", "default"}, {"arguments", arguments}};
  res["locations"] = json::array({{{"logicalLocations", json::array({{{"fullyQualifiedName", d.location}, {"kind", "parameter"}}})}}});
  res["partialFingerprints"] = {{"kparityRule/v1", detail::hex64(detail::fnv1a(d.id + "\n" + d.op + "\n" + d.argument))}};
  json args = json::object();
  for (const auto& a : d.args) args[a.name] = a.value;
  json fixes = json::array();
  if (auto it = index.find(d.id); it != index.end())
    for (const auto& s : json_str_list(rules[it->second]->record, "solutions")) fixes.push_back(s);
  res["properties"] = {{"context", d.context}, {"notes", d.notes}, {"args", args}, {"fixes", fixes}};
  return res;
}

}  // namespace

std::string explain_text(const CatalogEntry& e, const Catalog& c) {
  const auto& r = e.record;
  std::string out = json_str(r, "repo") + " · " + level_of(e.severity) + " · " + std::string(error_class_name(e.error_class)) + "\n";
  out += "\n" + (e.summary.empty() ? e.error_message : e.summary) + "\n";
  if (e.status != "active") {
    std::string s = "Status: " + e.status + ".";
    if (const auto by = json_str(r, "replacedBy"); !by.empty()) s += " Replaced by " + by + ".";
    if (const auto note = json_str(r, "note"); !note.empty()) s += " " + note;
    out += "\n" + s + "\n";
  }
  std::string message = e.error_message + "\n";
  if (e.message_template != e.error_message && !e.message_template.empty())
    message += "\nTemplate: " + e.message_template + "\nPattern: " + e.message_pattern + "\n";
  section(out, "Error message", message);
  section(out, "What it means", json_str(r, "documentation"));
  section(out, "Source", source_text(e));
  section(out, "Solutions", bullets(json_str_list(r, "solutions"), true));
  section(out, "Example fix", json_str(r, "exampleFix"));
  std::string when;
  if (auto t = json_str(r, "triggerScenarios"); !detail::trim(t).empty()) when += "Trigger: " + t + "\n";
  if (auto t = json_str(r, "commonSituations"); !detail::trim(t).empty()) when += (when.empty() ? "" : "\n") + ("Common situations: " + t + "\n");
  section(out, "When it happens", when);
  std::string prevention = bullets(json_str_list(r, "preventionTips"), false);
  if (auto h = json_str(r, "handlingStrategy"); !h.empty()) prevention += (prevention.empty() ? "" : "\n") + ("Strategy: " + h + "\n");
  section(out, "Prevention", prevention);
  std::string rel;
  for (const auto* x : related_entries(e, c)) rel += "• " + x->error_message + " (" + x->id + ", " + x->slug + ")\n";
  section(out, "Related errors", rel);
  out += "\nCatalog id: " + e.id + " (" + e.slug + ")\n";
  return out;
}

json explain_json(const CatalogEntry& e) {
  json j = e.record;
  j["rendered"] = {{"page", explain_text(e, active_catalog())},
                   {"sarifMessage", detail::positional_template(e.message_template, arg_names(e))},
                   {"documented", e.documented()},
                   {"source", e.source}};
  return j;
}

json sarif_log(const std::vector<const CatalogEntry*>& rules, const std::vector<Diagnostic>& results) {
  std::map<std::string, std::size_t> index;
  json jrules = json::array();
  for (std::size_t i = 0; i < rules.size(); ++i) {
    index.emplace(rules[i]->id, i);
    jrules.push_back(rule_of(*rules[i]));
  }
  json jresults = json::array();
  for (const auto& d : results) jresults.push_back(result_of(d, index, rules));
  json driver = {{"name", "kparity"}, {"semanticVersion", KPARITY_VERSION_STRING}, {"rules", jrules}};
  return {{"$schema", "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"},
          {"version", "2.1.0"},
          {"runs", json::array({{{"tool", {{"driver", driver}}}, {"results", jresults}}})}};
}

std::string markdown_index(const std::vector<const CatalogEntry*>& entries, const Catalog& c) {
  std::map<std::string, std::vector<const CatalogEntry*>> by_op;
  for (const auto* e : entries) by_op[e->op].push_back(e);
  std::string out = "# kparity error index\n\nOne section per catalog entry, grouped by op in check order.\n";
  for (auto& [op, list] : by_op) {
    std::stable_sort(list.begin(), list.end(), [](auto* a, auto* b) { return a->check_order < b->check_order; });
    out += "\n## " + op + "\n";
    for (const auto* e : list) {
      const auto& r = e->record;
      out += "\n### <a id=\"" + e->id + "\"></a>" + e->id + " `" + e->slug + "`\n\n";
      if (!e->summary.empty()) out += "**" + e->summary + "**\n\n";
      out += "```text\n" + std::string(error_class_name(e->error_class)) + ": " + e->error_message + "\n```\n\n";
      out += "- severity: " + level_of(e->severity) + ", origin: " + e->origin + ", status: " + e->status + "\n";
      if (auto ref = json_str(r, "checkRef"); !ref.empty()) out += "- spec: " + ref + "\n";
      if (auto uri = json_str(r, "helpUri"); !uri.empty())
        out += "- upstream: [" + json_str(r, "filePath") + ":" + line_number(r) + "](" + uri + ")\n";
      if (e->documented()) out += "\n" + std::string(detail::trim(json_str(r, "documentation"))) + "\n";
      if (auto sol = json_str_list(r, "solutions"); !sol.empty()) out += "\nSolutions:\n\n" + bullets(sol, true);
      std::string rel;
      for (const auto* x : related_entries(*e, c)) rel += (rel.empty() ? "" : ", ") + ("[`" + x->slug + "`](#" + x->id + ")");
      if (!rel.empty()) out += "\nRelated: " + rel + "\n";
    }
  }
  return out;
}

std::string list_text(const std::vector<const CatalogEntry*>& entries) {
  std::string out;
  for (const auto* e : entries) out += e->id + "  " + e->slug + "  " + (e->summary.empty() ? e->error_message : e->summary) + "\n";
  return out;
}

}  // namespace kparity
