#include "vehicle/json_feed.hpp"

namespace mavswitch::vehicle {

bool JsonFeed::wants(const protocol::FrameView& frame, WallClock::time_point now) {
  if (filter_.system && *filter_.system != frame.sysid()) return false;
  if (filter_.component && *filter_.component != frame.compid()) return false;
  if (!filter_.messages.contains(frame.msgid())) return false;
  if (filter_.rate <= 0) return true;
  // The newest frame is sent when one is due: a client at 5 a second gets every fifth-of-a-second
  // frame as it comes, not a stale one later.
  const auto interval =
      std::chrono::duration_cast<WallClock::duration>(std::chrono::duration<double>(1 / filter_.rate));
  const uint64_t key = uint64_t(frame.sysid()) << 40 | uint64_t(frame.compid()) << 32 | frame.msgid();
  const auto [it, first] = sent_.try_emplace(key, now);
  if (first) return true;
  if (now - it->second < interval) return false;
  // Due times step by the interval (jitter does not slow the rate), but never bank a burst.
  it->second = now - it->second < 2 * interval ? it->second + interval : now;
  return true;
}

void JsonFeed::push(Text text) {
  // Bounded by what 10 ms of routing brings, and beyond that by dropping its oldest: a burst the
  // window could not take in time.
  if (batch_.size() == 2 * kMaxWaiting) {
    batch_.erase(batch_.begin(), batch_.begin() + kMaxWaiting);
    // relaxed: a count for statistics; nothing else is published through it.
    dropped_.fetch_add(kMaxWaiting, std::memory_order_relaxed);
  }
  batch_.push_back(std::move(text));
}

void JsonFeed::wake() {
  if (batch_.empty()) return;  // nothing new since the last wake-up: the window is not disturbed
  waiting_.put([&](std::vector<Text>& waiting) {
    if (waiting.empty()) {
      waiting.swap(batch_);  // the storage the window gave back serves the next batch
    } else {
      for (Text& t : batch_) waiting.push_back(std::move(t));
    }
    if (waiting.size() > kMaxWaiting) {
      const size_t over = waiting.size() - kMaxWaiting;
      waiting.erase(waiting.begin(), waiting.begin() + std::ptrdiff_t(over));
      // relaxed: a count for statistics; nothing else is published through it.
      dropped_.fetch_add(over, std::memory_order_relaxed);
    }
    return true;
  });
  batch_.clear();  // keeps its storage: nothing is allocated per text in steady state
}

}  // namespace mavswitch::vehicle
