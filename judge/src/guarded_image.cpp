// A tensor's memory span between guard bands (guarded_image.hpp).
#include "kparity/judge/guarded_image.hpp"

#include <algorithm>

#include "kparity/judge/guard.hpp"

namespace kparity::judging {

GuardedImage::GuardedImage(std::string name, Tensor& host, bool written)
    : name_(std::move(name)), host_(host), written_(written) {
  const TensorView v = host.view();
  es_ = v.element_size();
  if (v.numel() > 0) {
    const auto [lo, hi] = v.offset_range();
    lo_ = lo;
    span_ = static_cast<std::size_t>(hi - lo + 1) * es_;
  }
  const auto* storage = host.storage().data();
  const auto* first = static_cast<const std::byte*>(v.data) + lo_ * static_cast<std::int64_t>(es_);
  lead_ = kGuardBytes + (span_ ? static_cast<std::size_t>(first - storage) % 256 : 0);
  image_.resize(lead_ + span_ + kGuardBytes);
  const auto pattern = guard_pattern(v.dtype);
  fill_guard({image_.data(), lead_}, pattern);
  fill_guard({image_.data() + lead_ + span_, kGuardBytes}, pattern);
  if (span_) std::copy(first, first + span_, image_.begin() + static_cast<std::ptrdiff_t>(lead_));
}

std::int64_t GuardedImage::element_zero_offset() const {
  return static_cast<std::int64_t>(lead_) - lo_ * static_cast<std::int64_t>(es_);
}

TensorView GuardedImage::view_at(void* base, Device device) const {
  TensorView v = host_.view();
  v.device = device;
  v.data = static_cast<std::byte*>(base) + element_zero_offset();
  return v;
}

std::string GuardedImage::finish(std::span<const std::byte> after) {
  if (after.size() != image_.size())
    return "`" + name_ + "`: " + std::to_string(image_.size()) + " bytes placed, " + std::to_string(after.size()) +
           " read back";
  const auto pattern = guard_pattern(host_.dtype());
  const std::span<const std::byte> before(image_.data() + lead_, span_);
  std::string problems;
  auto add = [&](std::string s) {
    if (!s.empty()) problems += (problems.empty() ? "" : "; ") + s;
  };
  add(check_guard(name_, "guard band before", after.subspan(0, lead_), pattern));
  add(check_guard(name_, "guard band after", after.subspan(lead_ + span_, kGuardBytes), pattern));
  add(check_untouched(name_, host_.view(), written_, before, after.subspan(lead_, span_)));
  if (written_ && span_) {
    auto* first = static_cast<std::byte*>(host_.view().data) + lo_ * static_cast<std::int64_t>(es_);
    std::copy(after.begin() + static_cast<std::ptrdiff_t>(lead_),
              after.begin() + static_cast<std::ptrdiff_t>(lead_ + span_), first);
  }
  return problems;
}

}  // namespace kparity::judging
