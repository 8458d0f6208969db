#include "transport/rate_limit.hpp"

#include <algorithm>

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
