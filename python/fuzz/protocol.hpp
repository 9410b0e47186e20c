#pragma once
// The framing between kparity-fuzz-host and kparity.fuzz (python/kparity/fuzz/_host.py): each message
// is a little-endian u64 length and that many bytes of JSON header, then a u64 length and that many
// bytes of binary payload (tensor images and outputs, located by offset and size in the header).
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace kparity::py {

struct Message {
  nlohmann::json header;
  std::vector<std::byte> payload;
};

class Channel {
 public:
  Channel(int in_fd, int out_fd) : in_(in_fd), out_(out_fd) {}
  void send(const Message& m);
  // Throws std::runtime_error at end of input (the Python side went away).
  Message receive();

 private:
  int in_, out_;
};

// Scalars travel as text so that inf and nan survive JSON ("inf", "-inf", "nan", else %.17g).
std::string scalar_text(double v);
double scalar_value(const std::string& s);

}  // namespace kparity::py
