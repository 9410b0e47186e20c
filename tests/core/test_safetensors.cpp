#include <gtest/gtest.h>

#include <cstring>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "kparity/core/safetensors.hpp"

namespace kparity {
namespace {

namespace fs = std::filesystem;

fs::path temp_path(const std::string& name) {
  const fs::path dir = fs::temp_directory_path() / ("kparity_core_test_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  return dir / name;
}

std::vector<std::byte> file_bytes(std::uint64_t header_len, const std::string& header, std::size_t data_size) {
  std::vector<std::byte> out(8 + header.size() + data_size, std::byte{0});
  std::memcpy(out.data(), &header_len, 8);  // the test host is little-endian, like the format
  std::memcpy(out.data() + 8, header.data(), header.size());
  return out;
}

std::vector<std::byte> file_bytes(const std::string& header, std::size_t data_size) {
  return file_bytes(header.size(), header, data_size);
}

// Parses bytes expected to be malformed; the error must name what is wrong.
void expect_error(const std::vector<std::byte>& bytes, const std::string& needle) {
  try {
    parse_safetensors(bytes.data(), bytes.size());
    ADD_FAILURE() << "accepted a malformed file; expected an error mentioning '" << needle << "'";
  } catch (const SafetensorsError& e) {
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << "message: " << e.what();
  }
}

std::vector<std::byte> read_all(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::vector<char> c((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::vector<std::byte> b(c.size());
  std::memcpy(b.data(), c.data(), c.size());
  return b;
}

TEST(Safetensors, RoundTripEveryDtypeWithMetadata) {
  std::map<std::string, Tensor> owned;
  std::uint64_t seed = 1;
  for (DType t : kAllDTypes) {
    Tensor x(t, {3, 5});
    if (is_floating(t)) x.fill_normal(seed++);
    else x.fill_int(seed++, t == DType::boolean ? 0 : -1000, t == DType::boolean ? 1 : 1000);
    owned.emplace(std::string(dtype_name(t)), x);
  }
  owned.emplace("scalar", Tensor(DType::f32, {}).fill(2.5));
  owned.emplace("empty", Tensor(DType::bf16, {0, 4}));
  Tensor strided = Tensor::strided(DType::f16, {2, 3}, {1, 4}, 1);  // non-contiguous with padding
  strided.poison().fill_uniform(11, -1.0, 1.0);
  owned.emplace("strided", strided);

  std::map<std::string, TensorView> views;
  for (const auto& [name, t] : owned) views.emplace(name, t.view());
  const std::map<std::string, std::string> meta{{"format", "pt"}, {"note", "kparity \"test\""}};
  const fs::path p = temp_path("roundtrip.safetensors");
  write_safetensors(p, views, meta);
  EXPECT_FALSE(fs::exists(p.string() + ".tmp"));

  const auto bytes = read_all(p);
  std::uint64_t header_len;
  std::memcpy(&header_len, bytes.data(), 8);
  EXPECT_EQ(header_len % 8, 0u) << "data section must start 8-byte aligned";

  const SafetensorsFile f = read_safetensors(p);
  EXPECT_EQ(f.metadata, meta);
  ASSERT_EQ(f.tensors.size(), owned.size());
  for (const auto& [name, t] : owned) {
    const Tensor& got = f.tensors.at(name);
    EXPECT_EQ(got.dtype(), t.dtype()) << name;
    EXPECT_EQ(got.shape(), t.shape()) << name;
    EXPECT_TRUE(got.view().is_contiguous());
    EXPECT_EQ(got.storage(), t.clone_contiguous().storage()) << name;
  }
  fs::remove(p);
}

TEST(Safetensors, NoMetadataAndOverwrite) {
  Tensor x(DType::i32, {2});
  x.fill(7);
  const fs::path p = temp_path("plain.safetensors");
  write_safetensors(p, {{"x", x.view()}});
  write_safetensors(p, {{"x", x.view()}});  // replaces the existing file
  const SafetensorsFile f = read_safetensors(p);
  EXPECT_TRUE(f.metadata.empty());
  EXPECT_EQ(f.tensors.at("x").view().at_int({1}), 7);
  fs::remove(p);
}

TEST(Safetensors, WriteRejectsBadInput) {
  Tensor x(DType::f32, {1});
  const fs::path p = temp_path("bad.safetensors");
  EXPECT_THROW(write_safetensors(p, {{"__metadata__", x.view()}}), SafetensorsError);
  EXPECT_THROW(write_safetensors(p, {{"x", x.view_on(Device::cuda(0))}}), SafetensorsError);
  EXPECT_THROW(write_safetensors(temp_path("no_such_dir") / "x.safetensors", {{"x", x.view()}}), SafetensorsError);
}

TEST(Safetensors, ReadMissingOrTruncatedFile) {
  EXPECT_THROW(read_safetensors(temp_path("does_not_exist.safetensors")), SafetensorsError);
  const fs::path p = temp_path("trunc.safetensors");
  std::ofstream(p, std::ios::binary) << "abc";
  try {
    read_safetensors(p);
    ADD_FAILURE();
  } catch (const SafetensorsError& e) {
    EXPECT_NE(std::string(e.what()).find(p.string()), std::string::npos) << e.what();
  }
  fs::remove(p);
}

TEST(Safetensors, MinimalValidFileParses) {
  const auto b = file_bytes(R"({"a":{"dtype":"F16","shape":[2],"data_offsets":[0,4]}})", 4);
  const SafetensorsFile f = parse_safetensors(b.data(), b.size());
  EXPECT_EQ(f.tensors.at("a").shape(), (Shape{2}));
}

TEST(SafetensorsMalformed, ShorterThanLengthField) {
  expect_error({}, "shorter than the 8-byte");
  expect_error(std::vector<std::byte>(7), "shorter than the 8-byte");
}

TEST(SafetensorsMalformed, HeaderLengthBeyondFile) {
  expect_error(file_bytes(100, "{}", 0), "exceeds");
}

TEST(SafetensorsMalformed, HeaderLengthAbsurd) {
  expect_error(file_bytes(std::uint64_t{1} << 63, "{}", 0), "implausibly large");
  expect_error(file_bytes(~std::uint64_t{0}, "{}", 0), "implausibly large");
}

TEST(SafetensorsMalformed, HeaderNotJson) {
  expect_error(file_bytes(R"({"a": )", 0), "not valid JSON");
}

TEST(SafetensorsMalformed, HeaderNotObject) {
  expect_error(file_bytes("[1, 2]", 0), "not a JSON object");
}

TEST(SafetensorsMalformed, EntryNotObject) {
  expect_error(file_bytes(R"({"a": 3})", 0), "tensor 'a'");
}

TEST(SafetensorsMalformed, UnknownDtype) {
  for (const char* dt : {"F8_E4M3", "U8", "C64", "f64", "F128", ""}) {
    const std::string h = std::string(R"({"w":{"dtype":")") + dt + R"(","shape":[1],"data_offsets":[0,8]}})";
    expect_error(file_bytes(h, 8), std::string("unknown dtype '") + dt + "'");
  }
  expect_error(file_bytes(R"({"w":{"shape":[1],"data_offsets":[0,4]}})", 4), "'dtype'");
}

TEST(SafetensorsMalformed, ShapeNotListOfNonNegativeInts) {
  for (const char* shape : {"3", "[-1]", "[2.5]", R"(["2"])", "null", "[1,1,1,1,1,1,1]"}) {
    const std::string h = std::string(R"({"w":{"dtype":"F32","shape":)") + shape + R"(,"data_offsets":[0,0]}})";
    expect_error(file_bytes(h, 0), "tensor 'w'");
  }
  expect_error(file_bytes(R"({"w":{"dtype":"F32","shape":[-1],"data_offsets":[0,0]}})", 0), "'shape'");
}

TEST(SafetensorsMalformed, DataOffsetsMalformed) {
  for (const char* off : {"3", "[0]", "[0,4,8]", "[-4,0]", "[0,4.0]", "null"}) {
    const std::string h = std::string(R"({"w":{"dtype":"F32","shape":[1],"data_offsets":)") + off + "}}";
    expect_error(file_bytes(h, 8), "'data_offsets'");
  }
}

TEST(SafetensorsMalformed, DataOffsetsBeginAfterEnd) {
  expect_error(file_bytes(R"({"w":{"dtype":"F32","shape":[0],"data_offsets":[8,4]}})", 8), "is after end");
}

TEST(SafetensorsMalformed, DataOffsetsOutOfRange) {
  expect_error(file_bytes(R"({"w":{"dtype":"F32","shape":[2],"data_offsets":[4,12]}})", 8), "beyond the data section");
  expect_error(file_bytes(R"({"w":{"dtype":"F32","shape":[1],"data_offsets":[18446744073709551615,4]}})", 8),
               "tensor 'w'");
}

TEST(SafetensorsMalformed, ByteSizeMismatch) {
  expect_error(file_bytes(R"({"w":{"dtype":"BF16","shape":[3],"data_offsets":[0,8]}})", 8), "needs 6");
  // F64 elements are 8 bytes: a span sized for F32 is short, one sized for 4 elements is long.
  expect_error(file_bytes(R"({"w":{"dtype":"F64","shape":[3],"data_offsets":[0,12]}})", 32), "shape (3,) of F64 needs 24");
  expect_error(file_bytes(R"({"w":{"dtype":"F64","shape":[3],"data_offsets":[0,32]}})", 32), "needs 24");
  expect_error(file_bytes(R"({"w":{"dtype":"F64","shape":[3],"data_offsets":[8,32]}})", 24), "beyond the data section");
}

TEST(Safetensors, F64ReadsWhatTorchWrites) {
  // Laid out as safetensors.torch.save_file lays out {"x": torch.tensor([0.1, -2.0, 1e-310], dtype=torch.float64)}
  // (header padding aside): the header, then three little-endian IEEE doubles; the subnormal survives.
  const std::string header = R"({"x":{"dtype":"F64","shape":[3],"data_offsets":[0,24]}})";
  auto b = file_bytes(header, 24);
  const double vals[] = {0.1, -2.0, 1e-310};
  std::memcpy(b.data() + 8 + header.size(), vals, sizeof vals);
  const SafetensorsFile f = parse_safetensors(b.data(), b.size());
  const Tensor& x = f.tensors.at("x");
  EXPECT_EQ(x.dtype(), DType::f64);
  for (int i = 0; i < 3; ++i) EXPECT_EQ(x.view().load_flat(i), vals[i]);

  // Written back: the header names F64, the data is the doubles bit for bit, 8-aligned.
  const fs::path p = temp_path("f64.safetensors");
  write_safetensors(p, {{"x", x.view()}});
  const auto out = read_all(p);
  std::uint64_t len;
  std::memcpy(&len, out.data(), 8);
  const std::string text(reinterpret_cast<const char*>(out.data()) + 8, len);
  EXPECT_NE(text.find(R"("dtype":"F64")"), std::string::npos) << text;
  ASSERT_EQ(out.size(), 8 + len + 24);
  EXPECT_EQ(std::memcmp(out.data() + 8 + len, vals, 24), 0);
  fs::remove(p);
}

TEST(SafetensorsMalformed, OverlappingRanges) {
  const std::string h = R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},)"
                        R"("b":{"dtype":"I32","shape":[2],"data_offsets":[4,12]}})";
  expect_error(file_bytes(h, 12), "'a' and 'b' have overlapping");
  // Empty tensors occupy no bytes, so sharing an offset with another tensor is fine.
  const std::string ok = R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},)"
                         R"("e":{"dtype":"F32","shape":[0],"data_offsets":[4,4]}})";
  const auto b = file_bytes(ok, 8);
  EXPECT_NO_THROW(parse_safetensors(b.data(), b.size()));
}

TEST(SafetensorsMalformed, MetadataNotStrings) {
  expect_error(file_bytes(R"({"__metadata__":{"k":1}})", 0), "key 'k' is not a string");
  expect_error(file_bytes(R"({"__metadata__":["x"]})", 0), "'__metadata__' must be an object");
}

TEST(SafetensorsMalformed, NumelOverflow) {
  expect_error(file_bytes(R"({"w":{"dtype":"F32","shape":[4294967296,4294967296],"data_offsets":[0,0]}})", 0),
               "overflows");
  // numel fits in 64 bits but the byte count does not.
  expect_error(file_bytes(R"({"w":{"dtype":"I64","shape":[4611686018427387904],"data_offsets":[0,0]}})", 0),
               "overflows");
}

}  // namespace
}  // namespace kparity
