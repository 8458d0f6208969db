#include "protocol/message_table.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace mavswitch::protocol {

MessageTable::MessageTable(std::span<const MessageInfo> infos)
    : infos_(infos.begin(), infos.end()), dense_(kDenseIds, 0) {
  std::sort(infos_.begin(), infos_.end(), [](const MessageInfo& a, const MessageInfo& b) { return a.id < b.id; });
  if (infos_.size() >= 0xFFFF) throw std::length_error("message table: too many messages");
  for (size_t i = 0; i < infos_.size(); ++i) {
    if (i > 0 && infos_[i].id == infos_[i - 1].id) {
      throw std::invalid_argument("message table: message id " + std::to_string(infos_[i].id) + " appears twice");
    }
    if (infos_[i].id < kDenseIds) dense_[infos_[i].id] = static_cast<uint16_t>(i + 1);
  }
}

const MessageInfo* MessageTable::find_sparse(uint32_t id) const noexcept {
  auto it =
      std::lower_bound(infos_.begin(), infos_.end(), id, [](const MessageInfo& m, uint32_t v) { return m.id < v; });
  return (it != infos_.end() && it->id == id) ? &*it : nullptr;
}

}  // namespace mavswitch::protocol
