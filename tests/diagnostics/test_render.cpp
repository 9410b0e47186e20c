// Templates, diagnostics and their text / JSON renderings, exceptions and Status.
#include <gtest/gtest.h>

#include "diagnostics/synthetic_catalog.hpp"
#include "kparity/diagnostics/diagnostic.hpp"
#include "kparity/diagnostics/errors.hpp"

namespace kparity::test {
namespace {

TEST(RenderTemplate, NamedPlaceholdersAndDoubledBraces) {
  EXPECT_EQ(render_template("`write_pos` must have shape {shape}.", {{"shape", "(3,)"}}), "`write_pos` must have shape (3,).");
  EXPECT_EQ(render_template("{a}+{b}={a}{b}", {{"a", "1"}, {"b", "2"}}), "1+2=12");
  EXPECT_EQ(render_template("{{literal}} {{{x}}}", {{"x", "v"}}), "{literal} {v}");
  EXPECT_EQ(render_template("a }} b {{", {}), "a } b {");
  EXPECT_EQ(render_template("missing {nope} stays", {}), "missing {nope} stays");
  EXPECT_EQ(render_template("no placeholders.", {{"x", "1"}}), "no placeholders.");
  EXPECT_EQ(render_template("unclosed {x", {{"x", "1"}}), "unclosed {x");
}

TEST(MakeDiagnostic, FillsFromTheActiveCatalog) {
  ScopedCatalog scope;
  Diagnostic d = make_diagnostic("aaaaaaaaaaaaaaa2", "kda/replayssm_decode::arg[write_pos].shape[0]", {{"shape", "(3,)"}}, {"got (4,)"});
  EXPECT_EQ(d.id, "aaaaaaaaaaaaaaa2");
  EXPECT_EQ(d.slug, "kda-test-write-pos-shape");
  EXPECT_EQ(d.op, "kda/replayssm_decode");
  EXPECT_EQ(d.argument, "x");
  EXPECT_EQ(d.error_class, ErrorClass::ValueError);
  EXPECT_EQ(d.severity, Severity::error);
  EXPECT_EQ(d.message, "`write_pos` must have shape (3,).");
  EXPECT_EQ(d.message_template, "`write_pos` must have shape {shape}.");
  ASSERT_EQ(d.notes.size(), 1u);
}

TEST(MakeDiagnostic, UnknownIdIsAnInternalError) {
  ScopedCatalog scope;
  try {
    make_diagnostic("ffffffffffffffff", "x");
    FAIL();
  } catch (const InternalError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("ffffffffffffffff"), std::string::npos);
    EXPECT_TRUE(what.ends_with("this is a bug in kparity, please report it")) << what;
    EXPECT_EQ(e.diagnostic().error_class, ErrorClass::InternalError);
  }
}

TEST(RenderText, LayoutAsInTheGuide) {
  ScopedCatalog scope;
  Diagnostic d = make_diagnostic("aaaaaaaaaaaaaaa1", "kda/replayssm_decode::arg[g_cache].dtype", {}, {"got torch.bfloat16"});
  d.add_context("while validating the inputs of kda/replayssm_decode");
  EXPECT_EQ(d.render_text(),
            "error[aaaaaaaaaaaaaaa1]: `g_cache` must have dtype torch.float32.\n"
            "  --> kda/replayssm_decode::arg[g_cache].dtype\n"
            "   = note: got torch.bfloat16\n"
            "   = note: while validating the inputs of kda/replayssm_decode\n"
            "   = help: Allocate it right.\n"
            "   = help: Check it early.\n"
            "For more information, run `kparity explain aaaaaaaaaaaaaaa1`.\n");
}

TEST(RenderText, WarningWithoutDocumentationHasNoFooter) {
  ScopedCatalog scope;
  Diagnostic d = make_diagnostic("aaaaaaaaaaaaaaa4", "kda/replayssm_decode::arg[write_pos][1]", {{"arg", "write_pos"}, {"index", "3"}});
  EXPECT_EQ(d.message, "index {i}=3 of write_pos is odd {}");
  const std::string text = d.render_text();
  EXPECT_EQ(text.rfind("warning[aaaaaaaaaaaaaaa4]: index {i}=3 of write_pos is odd {}\n", 0), 0u) << text;
  EXPECT_EQ(text.find("kparity explain"), std::string::npos) << text;
}

TEST(RenderText, ContextFramesKeepIdMessageAndLocation) {
  ScopedCatalog scope;
  Diagnostic d = make_diagnostic("aaaaaaaaaaaaaaa2", "kda/replayssm_decode::arg[write_pos]", {{"shape", "(2,)"}});
  const Diagnostic before = d;
  d.add_context("while validating the inputs of kda/replayssm_decode").add_context("in fuzz case seed=0x2a, step 3");
  EXPECT_EQ(d.id, before.id);
  EXPECT_EQ(d.message, before.message);
  EXPECT_EQ(d.location, before.location);
  ASSERT_EQ(d.context.size(), 2u);
  const std::string text = d.render_text();
  const auto a = text.find("= note: while validating"), b = text.find("= note: in fuzz case");
  ASSERT_NE(a, std::string::npos);
  ASSERT_NE(b, std::string::npos);
  EXPECT_LT(a, b) << "frames keep their order";
  Error err(d);
  EXPECT_STREQ(err.what(), "`write_pos` must have shape (2,).") << "what() is the message alone";
  EXPECT_EQ(err.full_text(), text);
}

TEST(RenderJson, KeysOfSchemaVersion1) {
  ScopedCatalog scope;
  Diagnostic d = make_diagnostic("aaaaaaaaaaaaaaa2", "kda/replayssm_decode::arg[write_pos]", {{"shape", "(3,)"}}, {"got (4,)"});
  d.add_context("while validating the inputs of kda/replayssm_decode");
  const std::string line = d.render_json();
  EXPECT_EQ(line.find('\n'), std::string::npos) << "one object per line";
  const auto j = nlohmann::json::parse(line);
  for (const char* k : {"$message_type", "schema_version", "id", "slug", "level", "message", "template", "args", "location",
                        "source_location", "context", "fixes", "upstream", "rendered"})
    EXPECT_TRUE(j.contains(k)) << k;
  EXPECT_EQ(j["$message_type"], "diagnostic");
  EXPECT_EQ(j["schema_version"], 1);
  EXPECT_EQ(j["level"], "error");
  EXPECT_EQ(j["args"]["shape"], "(3,)");
  EXPECT_EQ(j["context"][0], "while validating the inputs of kda/replayssm_decode");
  EXPECT_EQ(j["fixes"].size(), 2u);
  EXPECT_EQ(j["fixes"][0]["text"], "Allocate it right.");
  EXPECT_EQ(j["upstream"]["line"], 744);
  EXPECT_EQ(j["upstream"]["error_class"], "ValueError");
  EXPECT_EQ(j["rendered"], d.render_text());
  Diagnostic w = make_diagnostic("aaaaaaaaaaaaaaa4", "loc", {{"arg", "a"}, {"index", "1"}});
  EXPECT_TRUE(nlohmann::json::parse(w.render_json())["upstream"].is_null());
}

TEST(ErrorClasses, NamesRoundTrip) {
  for (ErrorClass c : {ErrorClass::ValueError, ErrorClass::RuntimeError, ErrorClass::IndexError, ErrorClass::TypeError,
                       ErrorClass::NotImplementedError, ErrorClass::AssertionError, ErrorClass::ZeroDivisionError,
                       ErrorClass::InternalError}) {
    ErrorClass back{};
    ASSERT_TRUE(parse_error_class(error_class_name(c), back));
    EXPECT_EQ(back, c);
  }
  ErrorClass out{};
  EXPECT_FALSE(parse_error_class("KeyError", out));
  EXPECT_EQ(severity_name(Severity::warning), "warning");
  EXPECT_EQ(severity_name(Severity::note), "note");
}

template <class Expected>
void expect_thrown_as(ErrorClass c, bool contract) {
  Diagnostic d;
  d.error_class = c;
  d.message = "m";
  d.id = "0123456789abcdef";
  try {
    throw_diagnostic(d);
  } catch (const Expected& e) {
    EXPECT_EQ(e.id(), "0123456789abcdef");
    EXPECT_EQ(dynamic_cast<const ContractError*>(&e) != nullptr, contract);
    return;
  } catch (...) {
  }
  ADD_FAILURE() << "wrong exception for " << error_class_name(c);
}

TEST(ErrorClasses, ThrowDiagnosticPicksTheSubclass) {
  expect_thrown_as<ValueError>(ErrorClass::ValueError, true);
  expect_thrown_as<RuntimeError>(ErrorClass::RuntimeError, true);
  expect_thrown_as<IndexError>(ErrorClass::IndexError, true);
  expect_thrown_as<TypeError>(ErrorClass::TypeError, true);
  expect_thrown_as<NotImplementedError>(ErrorClass::NotImplementedError, true);
  expect_thrown_as<AssertionError>(ErrorClass::AssertionError, true);
  expect_thrown_as<ZeroDivisionError>(ErrorClass::ZeroDivisionError, true);
  expect_thrown_as<InternalError>(ErrorClass::InternalError, false);
}

TEST(ErrorClasses, ThrowInternal) {
  try {
    throw_internal("ring cursor went negative");
  } catch (const Error& e) {
    EXPECT_NE(dynamic_cast<const InternalError*>(&e), nullptr);
    EXPECT_EQ(dynamic_cast<const ContractError*>(&e), nullptr) << "internal errors are not contract errors";
    EXPECT_TRUE(std::string(e.what()).ends_with("this is a bug in kparity, please report it"));
    EXPECT_NE(std::string(e.what()).find("ring cursor went negative"), std::string::npos);
  }
}

TEST(StatusForm, OkFirstErrorAndRaise) {
  EXPECT_TRUE(Status::success().ok());
  EXPECT_EQ(Status::success().first_error(), nullptr);
  EXPECT_NO_THROW(Status::success().raise_if_error());
  Diagnostic warn;
  warn.severity = Severity::warning;
  warn.id = "1111111111111111";
  Diagnostic err;
  err.error_class = ErrorClass::RuntimeError;
  err.id = "2222222222222222";
  err.message = "boom";
  Status only_warning{{warn}};
  EXPECT_TRUE(only_warning.ok());
  EXPECT_NO_THROW(only_warning.raise_if_error());
  Status failed{{warn, err}};
  EXPECT_FALSE(failed.ok());
  ASSERT_NE(failed.first_error(), nullptr);
  EXPECT_EQ(failed.first_error()->id, "2222222222222222");
  EXPECT_THROW(failed.raise_if_error(), RuntimeError);
}

}  // namespace
}  // namespace kparity::test
