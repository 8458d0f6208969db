#include "transport/pacer.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>

namespace mavswitch::transport {
namespace {
constexpr double kBurstSeconds = 0.02;
}  // namespace

Pacer::Pacer(uint64_t bytes_per_second, Millis max_delay) : max_delay_(max_delay), stream_of_(kTelemetryStreams) {
  auto fill = [](std::vector<uint16_t>& free, size_t first, size_t n) {
    for (size_t i = first + n; i > first; --i) free.push_back(static_cast<uint16_t>(i - 1));
  };
  fill(free_control_, 0, kControlFrames);
  fill(free_status_, kControlFrames, kStatusFrames);
  fill(free_telemetry_, kControlFrames + kStatusFrames, kTelemetryStreams);
  waiting_.reserve(kTelemetryStreams);
  set_rate(bytes_per_second);
  tokens_ = burst_;
}

void Pacer::set_rate(uint64_t bytes_per_second) noexcept {
  rate_ = std::max<uint64_t>(1, bytes_per_second);
  burst_ = std::max(double(protocol::kMaxFrameLen), double(rate_) * kBurstSeconds);
  tokens_ = std::min(tokens_, burst_);
}

uint16_t Pacer::claim(std::vector<uint16_t>& free) {
  const uint16_t i = free.back();
  free.pop_back();
  return i;
}

bool Pacer::push(protocol::MessageClass c, uint64_t stream, std::span<const uint8_t> frame, Millis now) {
  if (frame.size() > protocol::kMaxFrameLen) return false;
  // Storage on first use: a server's clients that are never sent to cost a few words each.
  if (!slots_) slots_ = std::make_unique<Slot[]>(kControlFrames + kStatusFrames + kTelemetryStreams);
  auto store = [&](uint16_t i) {
    Slot& s = slots_[i];
    s.at = now;
    s.len = static_cast<uint16_t>(frame.size());
    held_ += s.len;
    std::memcpy(s.bytes, frame.data(), frame.size());
  };
  const auto cls = static_cast<size_t>(c);
  switch (c) {
    case protocol::MessageClass::kControl:
    case protocol::MessageClass::kStatus: {
      Ring& ring = c == protocol::MessageClass::kControl ? control_ : status_;
      auto& free = c == protocol::MessageClass::kControl ? free_control_ : free_status_;
      if (ring.full()) {
        ++counts_.dropped[cls];
        return false;
      }
      const uint16_t i = claim(free);
      store(i);
      ring.push(i);
      return true;
    }
    case protocol::MessageClass::kTelemetry: {
      auto it = std::find_if(waiting_.begin(), waiting_.end(), [&](const auto& w) { return w.first == stream; });
      if (it != waiting_.end()) {  // the newer value takes the older one's place in line
        ++counts_.superseded;
        held_ -= slots_[it->second].len;
        store(it->second);
        return true;
      }
      if (telemetry_order_.full()) {
        ++counts_.dropped[cls];
        return false;
      }
      const uint16_t i = claim(free_telemetry_);
      store(i);
      stream_of_[i - kControlFrames - kStatusFrames] = stream;
      waiting_.emplace_back(stream, i);
      telemetry_order_.push(i);
      return true;
    }
  }
  return false;
}

void Pacer::refill(Millis now) noexcept {
  if (refilled_at_ >= 0 && now > refilled_at_)
    tokens_ = std::min(burst_, tokens_ + double(rate_) * double(now - refilled_at_) / 1000.0);
  refilled_at_ = std::max(refilled_at_, now);
}

Millis Pacer::wait_ms() const noexcept {
  return std::max<Millis>(1, static_cast<Millis>(std::ceil((1.0 - tokens_) * 1000.0 / double(rate_))));
}

const Pacer::Slot* Pacer::next(Millis now) {
  if (control_.size() != 0) {
    from_ = From::kControl;
    return &slots_[control_.front()];
  }
  // Stale status and telemetry go unsent: the bound is on how old what arrives may be.
  struct Waiting {
    Ring* ring;
    From from;
    protocol::MessageClass c;
  };
  for (const Waiting w : {Waiting{&status_, From::kStatus, protocol::MessageClass::kStatus},
                          Waiting{&telemetry_order_, From::kTelemetry, protocol::MessageClass::kTelemetry}}) {
    from_ = w.from;
    while (w.ring->size() != 0 && now - slots_[w.ring->front()].at > max_delay_) {
      ++counts_.dropped[static_cast<size_t>(w.c)];
      pop();
    }
    if (w.ring->size() != 0) return &slots_[w.ring->front()];
  }
  from_ = From::kNone;
  return nullptr;
}

void Pacer::pop() {
  const Ring* ring = from_ == From::kControl ? &control_ : from_ == From::kStatus ? &status_ : &telemetry_order_;
  if (from_ != From::kNone) held_ -= slots_[ring->front()].len;
  switch (from_) {
    case From::kControl:
      free_control_.push_back(control_.front());
      control_.pop();
      break;
    case From::kStatus:
      free_status_.push_back(status_.front());
      status_.pop();
      break;
    case From::kTelemetry: {
      const uint16_t i = telemetry_order_.front();
      const uint64_t stream = stream_of_[i - kControlFrames - kStatusFrames];
      std::erase_if(waiting_, [&](const auto& w) { return w.first == stream; });
      free_telemetry_.push_back(i);
      telemetry_order_.pop();
      break;
    }
    case From::kNone: break;
  }
}

}  // namespace mavswitch::transport
