// What the wire layer must know about each message id: its CRC_EXTRA (to validate frames),
// its payload lengths, and where target_system / target_component sit in the payload (for
// routing). Built by the dialect layer, from generated code or from XML at run time.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

namespace mavswitch::protocol {

struct MessageInfo {
  uint32_t id = 0;
  uint8_t crc_extra = 0;
  uint8_t min_len = 0;                   // payload bytes without extension fields (a v1 payload)
  uint8_t max_len = 0;                   // payload bytes with extension fields
  int16_t target_system_offset = -1;     // byte offset in the payload, -1 when absent
  int16_t target_component_offset = -1;  // byte offset in the payload, -1 when absent
  std::string_view name;                 // storage owned by whoever built the table
};

// Lookup by message id in O(1) for ids below 65536 (every id in use today), by binary search
// above. Immutable once built, so any number of threads may read it.
class MessageTable {
 public:
  MessageTable() = default;
  explicit MessageTable(std::span<const MessageInfo> infos);

  const MessageInfo* find(uint32_t id) const noexcept {
    if (id < kDenseIds) {
      const uint16_t slot = dense_.empty() ? 0 : dense_[id];
      return slot ? &infos_[slot - 1u] : nullptr;
    }
    return find_sparse(id);
  }
  std::span<const MessageInfo> all() const noexcept { return infos_; }
  size_t size() const noexcept { return infos_.size(); }

 private:
  static constexpr uint32_t kDenseIds = 1u << 16;
  const MessageInfo* find_sparse(uint32_t id) const noexcept;

  std::vector<MessageInfo> infos_;  // sorted by id
  std::vector<uint16_t> dense_;     // id -> index + 1 into infos_, 0 when unknown
};

}  // namespace mavswitch::protocol
