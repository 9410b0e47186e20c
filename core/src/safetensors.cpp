#include "kparity/core/safetensors.hpp"

#include <algorithm>
#include <bit>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <vector>

#include "kparity/core/format.hpp"

namespace kparity {

static_assert(std::endian::native == std::endian::little, "safetensors data is little-endian; so is this host code");

namespace {

using nlohmann::json;

// The reference implementation refuses headers above 100 MB; anything larger is not a real file.
constexpr std::uint64_t kMaxHeaderBytes = 100'000'000;
constexpr const char* kMetadataKey = "__metadata__";

[[noreturn]] void fail(const std::string& msg) { throw SafetensorsError("safetensors: " + msg); }

bool as_nonneg(const json& j, std::uint64_t& out) {
  if (j.is_number_unsigned()) {
    out = j.get<std::uint64_t>();
    return true;
  }
  if (j.is_number_integer() && j.get<std::int64_t>() >= 0) {
    out = static_cast<std::uint64_t>(j.get<std::int64_t>());
    return true;
  }
  return false;
}

struct Entry {
  std::string name;
  DType dtype;
  Shape shape;
  std::uint64_t begin, end;
};

Entry parse_entry(const std::string& name, const json& j, std::uint64_t data_size) {
  const std::string where = "tensor '" + name + "'";
  if (!j.is_object()) fail(where + ": entry is not a JSON object");
  Entry e{name, DType::f32, {}, 0, 0};

  auto dt = j.find("dtype");
  if (dt == j.end() || !dt->is_string()) fail(where + ": missing or non-string 'dtype'");
  auto parsed = parse_safetensors_dtype(dt->get<std::string>());
  if (!parsed) fail(where + ": unknown dtype '" + dt->get<std::string>() + "'");
  e.dtype = *parsed;

  auto sh = j.find("shape");
  if (sh == j.end() || !sh->is_array()) fail(where + ": 'shape' must be a list of non-negative integers");
  if (sh->size() > static_cast<std::size_t>(kMaxRank)) {
    fail(where + ": rank " + std::to_string(sh->size()) + " exceeds the maximum of " + std::to_string(kMaxRank));
  }
  std::uint64_t numel = 1;
  for (const json& d : *sh) {
    std::uint64_t v = 0;
    if (!as_nonneg(d, v) || v > static_cast<std::uint64_t>(INT64_MAX)) {
      fail(where + ": 'shape' must be a list of non-negative integers, got " + sh->dump());
    }
    if (__builtin_mul_overflow(numel, v, &numel)) fail(where + ": element count of shape " + sh->dump() + " overflows");
    e.shape.push_back(static_cast<std::int64_t>(v));
  }
  std::uint64_t nbytes = 0;
  if (__builtin_mul_overflow(numel, dtype_size(e.dtype), &nbytes) || nbytes > static_cast<std::uint64_t>(INT64_MAX)) {
    fail(where + ": byte size of shape " + sh->dump() + " overflows");
  }

  auto off = j.find("data_offsets");
  if (off == j.end() || !off->is_array() || off->size() != 2 || !as_nonneg((*off)[0], e.begin) ||
      !as_nonneg((*off)[1], e.end)) {
    fail(where + ": 'data_offsets' must be [begin, end] with non-negative integers");
  }
  if (e.begin > e.end) {
    fail(where + ": data_offsets begin " + std::to_string(e.begin) + " is after end " + std::to_string(e.end));
  }
  if (e.end > data_size) {
    fail(where + ": data_offsets [" + std::to_string(e.begin) + ", " + std::to_string(e.end) +
         "] reach beyond the data section of " + std::to_string(data_size) + " bytes");
  }
  if (e.end - e.begin != nbytes) {
    fail(where + ": data_offsets span " + std::to_string(e.end - e.begin) + " bytes but shape " +
         py_tuple(e.shape) + " of " + std::string(safetensors_name(e.dtype)) + " needs " + std::to_string(nbytes));
  }
  return e;
}

std::map<std::string, std::string> parse_metadata(const json& j) {
  if (!j.is_object()) fail("'__metadata__' must be an object mapping strings to strings");
  std::map<std::string, std::string> out;
  for (auto it = j.begin(); it != j.end(); ++it) {
    if (!it->is_string()) fail("'__metadata__' value for key '" + it.key() + "' is not a string");
    out.emplace(it.key(), it->get<std::string>());
  }
  return out;
}

}  // namespace

SafetensorsFile parse_safetensors(const std::byte* bytes, std::size_t size) {
  if (size < 8) fail("file of " + std::to_string(size) + " bytes is shorter than the 8-byte header length");
  std::uint64_t header_len = 0;
  std::memcpy(&header_len, bytes, 8);
  if (header_len > kMaxHeaderBytes) fail("header length " + std::to_string(header_len) + " is implausibly large");
  if (header_len > size - 8) {
    fail("header length " + std::to_string(header_len) + " exceeds the " + std::to_string(size - 8) +
         " bytes after the length field");
  }
  const char* hbegin = reinterpret_cast<const char*>(bytes + 8);
  json header = json::parse(hbegin, hbegin + header_len, nullptr, /*allow_exceptions=*/false);
  if (header.is_discarded()) fail("header is not valid JSON");
  if (!header.is_object()) fail("header is not a JSON object");

  const std::byte* data = bytes + 8 + header_len;
  const std::uint64_t data_size = size - 8 - header_len;
  SafetensorsFile file;
  std::vector<Entry> entries;
  for (auto it = header.begin(); it != header.end(); ++it) {
    if (it.key() == kMetadataKey) {
      file.metadata = parse_metadata(*it);
    } else {
      entries.push_back(parse_entry(it.key(), *it, data_size));
    }
  }

  // Empty ranges occupy no bytes, so only non-empty ones can overlap.
  std::vector<const Entry*> sorted;
  for (const Entry& e : entries) {
    if (e.end > e.begin) sorted.push_back(&e);
  }
  std::sort(sorted.begin(), sorted.end(), [](const Entry* a, const Entry* b) { return a->begin < b->begin; });
  for (std::size_t i = 1; i < sorted.size(); ++i) {
    if (sorted[i]->begin < sorted[i - 1]->end) {
      fail("tensors '" + sorted[i - 1]->name + "' and '" + sorted[i]->name + "' have overlapping data_offsets");
    }
  }

  for (const Entry& e : entries) {
    Tensor t(e.dtype, e.shape);
    if (e.end > e.begin) std::memcpy(t.storage().data(), data + e.begin, e.end - e.begin);
    file.tensors.emplace(e.name, std::move(t));
  }
  return file;
}

SafetensorsFile read_safetensors(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) fail("cannot open '" + path.string() + "'");
  std::vector<char> buf((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) fail("error reading '" + path.string() + "'");
  try {
    return parse_safetensors(reinterpret_cast<const std::byte*>(buf.data()), buf.size());
  } catch (const SafetensorsError& e) {
    throw SafetensorsError(std::string(e.what()) + " (in '" + path.string() + "')");
  }
}

void write_safetensors(const std::filesystem::path& path, const std::map<std::string, TensorView>& tensors,
                       const std::map<std::string, std::string>& metadata) {
  json header = json::object();
  if (!metadata.empty()) header[kMetadataKey] = metadata;
  std::vector<std::byte> data;
  for (const auto& [name, view] : tensors) {
    if (name == kMetadataKey) fail("a tensor cannot be named '__metadata__'");
    if (!view.device.is_cpu()) fail("tensor '" + name + "' lives on " + view.device.str() + ", not the host");
    const std::size_t begin = data.size();
    const std::size_t esize = view.element_size();
    data.resize(begin + static_cast<std::size_t>(view.numel()) * esize);
    std::byte* out = data.data() + begin;
    // Row-major element order packs any strided view into the contiguous layout the format needs.
    for_each_element(view, [&](auto, std::int64_t off) {
      std::memcpy(out, static_cast<const std::byte*>(view.data) + off * static_cast<std::int64_t>(esize),
                  esize);
      out += esize;
    });
    header[name] = {{"dtype", std::string(safetensors_name(view.dtype))},
                    {"shape", view.shape()},
                    {"data_offsets", {begin, data.size()}}};
  }
  std::string text = header.dump();
  // The format recommends padding the header with spaces so the data section starts 8-aligned.
  text.append((8 - text.size() % 8) % 8, ' ');
  const std::uint64_t len = text.size();

  std::filesystem::path tmp = path;
  tmp += ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) fail("cannot open '" + tmp.string() + "' for writing");
    out.write(reinterpret_cast<const char*>(&len), 8);
    out.write(text.data(), static_cast<std::streamsize>(text.size()));
    out.write(reinterpret_cast<const char*>(data.data()), static_cast<std::streamsize>(data.size()));
    out.flush();
    if (!out) {
      out.close();
      std::error_code ec;
      std::filesystem::remove(tmp, ec);
      fail("error writing '" + tmp.string() + "'");
    }
  }
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  if (ec) {
    std::filesystem::remove(tmp, ec);
    fail("cannot rename into '" + path.string() + "': " + ec.message());
  }
}

}  // namespace kparity
