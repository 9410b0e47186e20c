#pragma once
// Small helpers shared by the diagnostics sources; not part of the public interface.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace kparity::detail {

const std::vector<std::pair<std::string_view, std::string_view>>& catalog_texts();
const std::vector<std::pair<std::string_view, std::string_view>>& fixture_texts();

std::string_view trim(std::string_view s) noexcept;

// The prefix a pasted message may carry: "ValueError: ", "torch.cuda.OutOfMemoryError: " or our own
// "error[<id>]: ". ECMAScript; the site's search script receives it through the search index.
inline constexpr const char* kMessagePrefixRegex =
    R"(^(?:(?:error|warning|note)\[[0-9a-f]{16}\]|(?:[A-Za-z_][A-Za-z0-9_]*(?:\.|::))*[A-Za-z_][A-Za-z0-9_]*(?:Error|Exception|Warning))\s*:\s*)";

// A record's string field, or "" when absent or null: prose fields are optional at run time.
std::string json_str(const nlohmann::json& rec, const char* key);
std::vector<std::string> json_str_list(const nlohmann::json& rec, const char* key);

// Placeholder names of a template in order of first appearance (`{{`/`}}` are not placeholders).
std::vector<std::string> template_placeholders(std::string_view tmpl);

// `{name}` -> `{i}` with i the position of name in `order`; a name not in `order`, and every
// literal brace, comes out doubled, because SARIF treats single braces as placeholders.
std::string positional_template(std::string_view tmpl, const std::vector<std::string>& order);

std::size_t edit_distance(std::string_view a, std::string_view b);
std::uint64_t fnv1a(std::string_view s) noexcept;
std::string hex64(std::uint64_t v);

}  // namespace kparity::detail
