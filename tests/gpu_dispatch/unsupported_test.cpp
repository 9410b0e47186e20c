// The kernel-dispatch catalog entries: each launcher refuses its entry's erroneous example with
// exactly that id before any CUDA call, so this runs with or without a GPU.
#include <gtest/gtest.h>

#include <regex>

#include "kparity/diagnostics/catalog.hpp"
#include "kparity/diagnostics/examples.hpp"
#include "kparity/judge/kernel_launch.hpp"
#include "kparity/kernels/kda.hpp"

namespace {

using namespace kparity;

Status launch(const std::string& op, const ArgBag& bag) { return judging::launch_kernel(op, bag, nullptr, {}); }

TEST(KernelDispatch, EveryKernelEntryFiresExactlyOnItsExample) {
  int seen = 0;
  for (const auto& e : Catalog::embedded().entries()) {
    if (e.record.value("emittedBy", "contracts") != "kernels") continue;
    ++seen;
    // Fires only in builds without the chunked kernel; a build with it would launch the example.
    if (e.slug == "kda-chunk-kernel-not-built" && kernels::kda::chunk_kernel_built()) continue;
    BuiltExample ex = build_example(e.record.at("erroneousExample"));
    // The contract accepts the call (upstream checks): the refusal is the dispatcher's.
    EXPECT_TRUE(find_op_contract(e.op)->validate(ex.bag, ValidateOptions::upstream()).empty()) << e.slug;
    const Status st = launch(e.op, ex.bag);
    ASSERT_FALSE(st.ok()) << e.slug;
    const Diagnostic& d = *st.first_error();
    EXPECT_EQ(d.id, e.id) << e.slug << ": " << d.message;
    EXPECT_EQ(d.error_class, ErrorClass::NotImplementedError) << e.slug;
    EXPECT_TRUE(std::regex_match(d.message, std::regex(e.message_pattern))) << d.message;
    EXPECT_EQ(d.message, e.error_message) << e.slug;
  }
  EXPECT_EQ(seen, 7);  // one per op, and kda/chunk's not-built entry
}

}  // namespace
