#include "transport/rate_limit.hpp"

#include <algorithm>

#include "protocol/frame_edit.hpp"
#include "protocol/message_class.hpp"

namespace mavswitch::transport {

void RateLimits::add(uint32_t msgid, double per_second) {
  auto it =
      std::lower_bound(named.begin(), named.end(), msgid, [](const Rule& r, uint32_t id) { return r.msgid < id; });
  if (it != named.end() && it->msgid == msgid)
    it->per_second = per_second;
  else
    named.insert(it, {msgid, per_second});
}

double RateLimits::rate_for(const protocol::FrameView& f) const noexcept {
  const uint32_t id = f.msgid();
  auto it = std::lower_bound(named.begin(), named.end(), id, [](const Rule& r, uint32_t m) { return r.msgid < m; });
  if (it != named.end() && it->msgid == id) return it->per_second;
  if (others <= 0 || protocol::classify(f) == protocol::MessageClass::kControl) return 0;
  return others;
}

bool admit_due(int64_t& next, int64_t interval_us, int64_t now_us) noexcept {
  if (now_us < next) return false;
  // Due times advance by the interval, so a stream that arrives between them still gets its
  // full rate; after a pause the next one waits at least half an interval (no burst).
  next = std::max(next + interval_us, now_us + interval_us / 2);
  return true;
}

void StreamWishes::set(uint8_t sysid, uint8_t compid, uint32_t msgid, int64_t interval_us) {
  const uint64_t key = protocol::stream_key(sysid, compid, msgid);
  if (interval_us == 0)
    wishes_.erase(key);
  else
    wishes_[key] = {interval_us, 0};
}

bool StreamWishes::admit(const protocol::FrameView& f, int64_t now_us) {
  const auto it = wishes_.find(protocol::stream_key(f));
  if (it == wishes_.end()) return true;
  if (it->second.interval_us == kOff) return false;
  return admit_due(it->second.next_us, it->second.interval_us, now_us);
}

std::span<const uint8_t> StreamWishes::tell_own(const protocol::FrameView& f, std::span<const uint8_t> bytes,
                                                std::span<uint8_t> out) const {
  // interval_us (int32), then message_id (uint16): a message id under 256 ends the payload at 5
  // bytes (MAVLink 2 drops trailing zeros); the interval is all there whenever the id is.
  constexpr uint32_t kMessageInterval = 244;
  // Signed (by its sender, or by the router for this link): not rewritten.
  if (f.msgid() != kMessageInterval || f.payload_len() < 5 || f.is_signed() || bytes.size() != f.size()) return bytes;
  const uint32_t message = f.payload_byte(4) | uint32_t{f.payload_byte(5)} << 8;
  const auto it = wishes_.find(protocol::stream_key(f.sysid(), f.compid(), message));
  if (it == wishes_.end() || out.size() < f.size()) return bytes;
  const auto interval = static_cast<uint32_t>(static_cast<int32_t>(it->second.interval_us));  // kOff: -1, as said
  std::copy(f.bytes().begin(), f.bytes().end(), out.begin());
  const std::span<uint8_t> frame = out.first(f.size());
  for (size_t i = 0; i < 4; ++i)
    protocol::set_frame_byte(frame, f.header_len() + i, static_cast<uint8_t>(interval >> (8 * i)));
  return frame;
}

bool RateLimiter::admit(const protocol::FrameView& f, int64_t now_us) {
  const double rate = limits_.rate_for(f);
  if (rate <= 0) return true;
  const auto interval = static_cast<int64_t>(1e6 / rate);
  const uint64_t key = protocol::stream_key(f);
  auto it = next_.find(key);
  if (it == next_.end()) {
    if (next_.size() >= kMaxStreams) next_.clear();
    next_.emplace(key, now_us + interval);
    return true;
  }
  return admit_due(it->second, interval, now_us);
}

}  // namespace mavswitch::transport
