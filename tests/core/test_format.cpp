#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "kparity/core/format.hpp"

namespace kparity {
namespace {

TEST(Format, PyTuple) {
  EXPECT_EQ(py_tuple({3}), "(3,)");
  EXPECT_EQ(py_tuple({3, 1, 4, 128}), "(3, 1, 4, 128)");
  EXPECT_EQ(py_tuple({}), "()");
  EXPECT_EQ(py_tuple({-1, 0}), "(-1, 0)");
  const std::vector<std::int64_t> v{2, 5};
  EXPECT_EQ(py_tuple(v), "(2, 5)");
}

TEST(Format, PyDtypeAndBool) {
  EXPECT_EQ(py_dtype(DType::f32), "torch.float32");
  EXPECT_EQ(py_dtype(DType::bf16), "torch.bfloat16");
  EXPECT_EQ(py_dtype(DType::f16), "torch.float16");
  EXPECT_EQ(py_dtype(DType::i32), "torch.int32");
  EXPECT_EQ(py_dtype(DType::i64), "torch.int64");
  EXPECT_EQ(py_dtype(DType::boolean), "torch.bool");
  EXPECT_EQ(py_dtype(DType::f64), "torch.float64");
  EXPECT_EQ(py_bool(true), "True");
  EXPECT_EQ(py_bool(false), "False");
}

// Expected strings are CPython 3.11's repr() of the same doubles (given as hex literals where the
// decimal spelling would hide which double is meant).
TEST(Format, PyFloatMatchesCPythonRepr) {
  struct Case { double v; const char* repr; };
  const Case cases[] = {
      {1.0, "1.0"},
      {1e-06, "1e-06"},
      {0.1, "0.1"},
      {1e16, "1e+16"},
      {1e15, "1000000000000000.0"},
      {0.0001, "0.0001"},
      {0.00001, "1e-05"},
      {0x1.b69b4ba630f35p+56, "1.2345678901234568e+17"},
      {1.5e-300, "1.5e-300"},
      {0x0.0000000000001p-1022, "5e-324"},
      {0x0.0000000000003p-1022, "1.5e-323"},
      {0x1.fffffffffffffp+1023, "1.7976931348623157e+308"},
      {-0.0, "-0.0"},
      {0.0, "0.0"},
      {2.5, "2.5"},
      {100.0, "100.0"},
      {0x1.5555555555555p-2, "0.3333333333333333"},
      {0x1.3333333333334p-2, "0.30000000000000004"},
      {123.456, "123.456"},
      {-1.5, "-1.5"},
      {0x1.1c37937e07fffp+53, "9999999999999998.0"},
      {1e22, "1e+22"},
      {12345.678, "12345.678"},
      {0.000123, "0.000123"},
      {0x1.18b54f22aeb03p+50, "1234567890123456.8"},
      {65504.0, "65504.0"},
      {0x1.fffffe0000000p+127, "3.4028234663852886e+38"},
      {0x1.f75104d551d6ap-16, "3.0000000000000004e-05"},
      {0x1.99999a0000000p-4, "0.10000000149011612"},
      {-1e-7, "-1e-07"},
  };
  for (const Case& c : cases) EXPECT_EQ(py_float(c.v), c.repr) << "value " << c.repr;
  EXPECT_EQ(py_float(std::numeric_limits<double>::infinity()), "inf");
  EXPECT_EQ(py_float(-std::numeric_limits<double>::infinity()), "-inf");
  EXPECT_EQ(py_float(std::nan("")), "nan");
  EXPECT_EQ(py_float(-std::nan("")), "nan");
}

}  // namespace
}  // namespace kparity
