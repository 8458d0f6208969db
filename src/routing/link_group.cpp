#include "routing/link_group.hpp"

namespace mavswitch::routing {

bool LinkGroup::heard(GroupMember& member, const protocol::FrameView& f, Millis now,
                      const FailoverTiming& timing) noexcept {
  // relaxed: a time stamp compared with a timeout; a stale one delays a decision by a frame at most.
  const Millis last = member.last_heard.load(std::memory_order_relaxed);
  if (last < 0 || now - last > timing.timeout) member.healthy_since.store(now, std::memory_order_relaxed);
  member.last_heard.store(now, std::memory_order_relaxed);
  // The CRC covers the sequence number and the payload: equal keys are the same frame.
  const uint32_t id = f.msgid();
  const uint16_t crc = f.checksum();
  const uint8_t key[8] = {f.sysid(),        f.compid(),        f.seq(),      uint8_t(id),
                          uint8_t(id >> 8), uint8_t(id >> 16), uint8_t(crc), uint8_t(crc >> 8)};
  {
    std::lock_guard lock(dedup_mutex_);
    if (!dedup_.seen_recently(key, now)) return true;
  }
  duplicates_.add_shared();
  return false;
}

}  // namespace mavswitch::routing
