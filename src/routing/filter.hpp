// Per-link allow/block lists by message id, source system and source component: the 12 filters
// of mavlink-router (6 for frames coming in, 6 for frames going out).
#pragma once

#include <bitset>
#include <cstdint>
#include <vector>

namespace mavswitch::routing {

// A set of message ids (24-bit): a bitmap for ids below 65536 (allocated on first use), a
// sorted list above.
class MessageIdSet {
 public:
  void add(uint32_t id);
  bool contains(uint32_t id) const noexcept;
  bool empty() const noexcept { return count_ == 0; }

 private:
  std::vector<uint64_t> low_;   // 1024 words once used
  std::vector<uint32_t> high_;  // sorted
  uint32_t count_ = 0;
};

class ByteSet {
 public:
  void add(uint8_t v) noexcept { bits_.set(v); }
  bool contains(uint8_t v) const noexcept { return bits_.test(v); }
  bool empty() const noexcept { return bits_.none(); }

 private:
  std::bitset<256> bits_;
};

struct Filter {
  MessageIdSet allow_msg, block_msg;
  ByteSet allow_sys, block_sys;
  ByteSet allow_comp, block_comp;

  // An empty allow list allows everything; a block list always wins.
  bool pass(uint32_t msgid, uint8_t sysid, uint8_t compid) const noexcept {
    return (allow_msg.empty() || allow_msg.contains(msgid)) && !block_msg.contains(msgid) &&
           (allow_sys.empty() || allow_sys.contains(sysid)) && !block_sys.contains(sysid) &&
           (allow_comp.empty() || allow_comp.contains(compid)) && !block_comp.contains(compid);
  }
  bool empty() const noexcept {
    return allow_msg.empty() && block_msg.empty() && allow_sys.empty() && block_sys.empty() && allow_comp.empty() &&
           block_comp.empty();
  }
};

}  // namespace mavswitch::routing
