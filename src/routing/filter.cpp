#include "routing/filter.hpp"

#include <algorithm>

namespace mavswitch::routing {

void MessageIdSet::add(uint32_t id) {
  if (contains(id)) return;
  if (id < 65536) {
    if (low_.empty()) low_.assign(65536 / 64, 0);
    low_[id / 64] |= uint64_t{1} << (id % 64);
  } else {
    high_.insert(std::upper_bound(high_.begin(), high_.end(), id), id);
  }
  ++count_;
}

bool MessageIdSet::contains(uint32_t id) const noexcept {
  if (id < 65536) return !low_.empty() && ((low_[id / 64] >> (id % 64)) & 1);
  return std::binary_search(high_.begin(), high_.end(), id);
}

}  // namespace mavswitch::routing
