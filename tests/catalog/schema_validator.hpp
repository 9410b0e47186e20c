#pragma once
// A JSON Schema validator for the subset of draft 2020-12 that catalog/schema.json uses. Debian has
// no validator package; a keyword the schema uses but this validator does not know fails loudly, so
// the schema cannot silently outgrow the test.
#include <regex>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace kparity::test {

class SchemaValidator {
 public:
  explicit SchemaValidator(nlohmann::json schema) : schema_(std::move(schema)) {}

  // Every violation, as "<json pointer>: <problem>"; empty when the instance is valid.
  std::vector<std::string> validate(const nlohmann::json& instance) const {
    std::vector<std::string> errors;
    check(schema_, instance, "", errors);
    return errors;
  }

 private:
  static bool has_type(const nlohmann::json& v, const std::string& t) {
    if (t == "object") return v.is_object();
    if (t == "array") return v.is_array();
    if (t == "string") return v.is_string();
    if (t == "integer") return v.is_number_integer() || (v.is_number_float() && v.get<double>() == static_cast<double>(static_cast<long long>(v.get<double>())));
    if (t == "number") return v.is_number();
    if (t == "boolean") return v.is_boolean();
    if (t == "null") return v.is_null();
    throw std::logic_error("schema uses unknown type " + t);
  }

  void check(const nlohmann::json& s, const nlohmann::json& v, const std::string& at, std::vector<std::string>& errors) const {
    static const std::set<std::string> known = {"$schema", "$id", "title", "description", "type", "required",
                                                "properties", "additionalProperties", "enum", "pattern", "items",
                                                "minItems", "minimum", "minLength"};
    for (const auto& [k, _] : s.items())
      if (!known.count(k)) throw std::logic_error("schema keyword '" + k + "' at '" + at + "' is not supported by the test validator");
    const std::string here = at.empty() ? "/" : at;
    if (auto t = s.find("type"); t != s.end()) {
      std::vector<std::string> types = t->is_array() ? t->get<std::vector<std::string>>() : std::vector<std::string>{t->get<std::string>()};
      bool ok = false;
      for (const auto& ty : types) ok = ok || has_type(v, ty);
      if (!ok) {
        errors.push_back(here + ": expected type " + t->dump() + ", got " + v.type_name());
        return;
      }
    }
    if (auto e = s.find("enum"); e != s.end()) {
      bool ok = false;
      for (const auto& x : *e) ok = ok || x == v;
      if (!ok) errors.push_back(here + ": " + v.dump() + " is not one of " + e->dump());
    }
    if (v.is_string()) {
      const auto str = v.get<std::string>();
      if (auto p = s.find("pattern"); p != s.end() && !std::regex_search(str, std::regex(p->get<std::string>(), std::regex::ECMAScript)))
        errors.push_back(here + ": '" + str + "' does not match " + p->get<std::string>());
      if (auto m = s.find("minLength"); m != s.end() && str.size() < m->get<std::size_t>())
        errors.push_back(here + ": shorter than " + m->dump() + " characters");
    }
    if (v.is_number()) {
      if (auto m = s.find("minimum"); m != s.end() && v.get<double>() < m->get<double>())
        errors.push_back(here + ": " + v.dump() + " is below the minimum " + m->dump());
    }
    if (v.is_array()) {
      if (auto m = s.find("minItems"); m != s.end() && v.size() < m->get<std::size_t>())
        errors.push_back(here + ": fewer than " + m->dump() + " items");
      if (auto it = s.find("items"); it != s.end())
        for (std::size_t i = 0; i < v.size(); ++i) check(*it, v[i], at + "/" + std::to_string(i), errors);
    }
    if (v.is_object()) {
      if (auto r = s.find("required"); r != s.end())
        for (const auto& name : *r)
          if (!v.contains(name.get<std::string>())) errors.push_back(here + ": missing required property '" + name.get<std::string>() + "'");
      const auto props = s.value("properties", nlohmann::json::object());
      for (const auto& [k, val] : v.items()) {
        if (props.contains(k)) {
          check(props[k], val, at + "/" + k, errors);
        } else if (auto ap = s.find("additionalProperties"); ap != s.end()) {
          if (ap->is_boolean() && !ap->get<bool>()) errors.push_back(here + ": property '" + k + "' is not allowed");
          else if (ap->is_object()) check(*ap, val, at + "/" + k, errors);
        }
      }
    }
  }

  nlohmann::json schema_;
};

}  // namespace kparity::test
