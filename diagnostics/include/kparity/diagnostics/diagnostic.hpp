#pragma once
// A diagnostic is data; text, JSON lines and SARIF are views of it.
#include <string>
#include <string_view>
#include <vector>

namespace kparity {

// Python exception classes, so a message and its class match upstream (ValueError for KDA,
// RuntimeError for sparse attention; AssertionError and ZeroDivisionError for fla's chunk_kda, whose
// wrapper asserts and divides). InternalError is kparity's own bugs only.
enum class ErrorClass {
  ValueError,
  RuntimeError,
  IndexError,
  TypeError,
  NotImplementedError,
  AssertionError,
  ZeroDivisionError,
  InternalError
};
enum class Severity { error, warning, note };

std::string_view error_class_name(ErrorClass c) noexcept;
bool parse_error_class(std::string_view s, ErrorClass& out) noexcept;
std::string_view severity_name(Severity s) noexcept;

// One named value of a message template, already rendered the way Python's str() prints it.
struct DiagArg {
  std::string name;
  std::string value;
};

struct Diagnostic {
  std::string id;        // 16 lowercase hex digits
  std::string slug;
  std::string op;        // "kda/replayssm_decode"
  std::string argument;  // catalog argument, e.g. "g_cache"
  ErrorClass error_class = ErrorClass::ValueError;
  Severity severity = Severity::error;
  std::string message;        // rendered; byte-identical to upstream for upstream entries
  std::string message_template;
  std::vector<DiagArg> args;
  std::string location;            // "<op>::arg[<name>]" + ".dtype" / ".shape[i]" / "[i]" ...
  std::vector<std::string> notes;  // operands the message omits: "got torch.bfloat16"
  std::vector<std::string> context;  // most specific first

  // Adds a frame without touching id, message or location.
  Diagnostic& add_context(std::string frame);
  // error[<id>]: <message> / --> location / = note ... / = help ... / footer (only when documented).
  std::string render_text() const;
  // One JSON object (no trailing newline), keys per the diagnostics guide 6.2, schema_version 1.
  std::string render_json() const;
};

// Renders `{name}` placeholders from args; `{{` and `}}` are literal braces. A placeholder with no
// matching arg is left as is (the catalog test rejects such templates).
std::string render_template(std::string_view tmpl, const std::vector<DiagArg>& args);

// Builds a diagnostic from the active catalog's entry `id` (class, severity, slug, op and argument
// from the entry; message from its template). An unknown id is an InternalError (a kparity bug).
Diagnostic make_diagnostic(std::string_view id, std::string location, std::vector<DiagArg> args = {},
                           std::vector<std::string> notes = {});

}  // namespace kparity
