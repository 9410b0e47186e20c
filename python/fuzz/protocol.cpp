// Message framing between kparity-fuzz-host and kparity.fuzz (protocol.hpp).
#include "protocol.hpp"

#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <stdexcept>

namespace kparity::py {
namespace {

void write_all(int fd, const void* data, std::size_t n) {
  const auto* p = static_cast<const char*>(data);
  while (n > 0) {
    const ssize_t w = ::write(fd, p, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) throw std::runtime_error(std::string("kparity-fuzz-host: write: ") + std::strerror(errno));
    p += w;
    n -= static_cast<std::size_t>(w);
  }
}

void read_all(int fd, void* data, std::size_t n) {
  auto* p = static_cast<char*>(data);
  while (n > 0) {
    const ssize_t r = ::read(fd, p, n);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) throw std::runtime_error("kparity-fuzz-host: the Python side closed the channel");
    p += r;
    n -= static_cast<std::size_t>(r);
  }
}

void write_u64(int fd, std::uint64_t v) {
  unsigned char b[8];
  for (int i = 0; i < 8; ++i) b[i] = static_cast<unsigned char>(v >> (8 * i));
  write_all(fd, b, 8);
}

std::uint64_t read_u64(int fd) {
  unsigned char b[8];
  read_all(fd, b, 8);
  std::uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v |= static_cast<std::uint64_t>(b[i]) << (8 * i);
  return v;
}

}  // namespace

void Channel::send(const Message& m) {
  const std::string h = m.header.dump();
  write_u64(out_, h.size());
  write_all(out_, h.data(), h.size());
  write_u64(out_, m.payload.size());
  if (!m.payload.empty()) write_all(out_, m.payload.data(), m.payload.size());
}

Message Channel::receive() {
  Message m;
  std::string h(read_u64(in_), '\0');
  read_all(in_, h.data(), h.size());
  m.header = nlohmann::json::parse(h);
  m.payload.resize(read_u64(in_));
  if (!m.payload.empty()) read_all(in_, m.payload.data(), m.payload.size());
  return m;
}

std::string scalar_text(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

double scalar_value(const std::string& s) { return std::strtod(s.c_str(), nullptr); }

}  // namespace kparity::py
