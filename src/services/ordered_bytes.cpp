#include "services/ordered_bytes.hpp"

#include <algorithm>

namespace mavswitch::services {

bool OrderedBytes::put(uint64_t offset, std::string_view bytes) {
  if (offset >= limit_) return false;
  bytes = bytes.substr(0, static_cast<size_t>(std::min<uint64_t>(bytes.size(), limit_ - offset)));
  if (bytes.empty() || offset + bytes.size() <= at_) return false;  // had it
  // A reader that does not read: what comes is not taken (it is asked for again once there is
  // room), so a peer that keeps sending fills the stream's capacity and no more.
  if (into_->room() == 0) return false;
  if (offset > at_) {
    if (ahead_bytes_ + bytes.size() > max_ahead_ || !ahead_.try_emplace(offset, bytes).second) return false;
    ahead_bytes_ += bytes.size();
    return true;
  }
  into_->write(bytes.substr(static_cast<size_t>(at_ - offset)));
  at_ = offset + bytes.size();
  // What was kept past the gap, now that the gap is filled.
  while (!ahead_.empty() && ahead_.begin()->first <= at_) {
    const auto first = ahead_.begin();
    const uint64_t off = first->first, n = first->second.size();
    if (off + n > at_) {
      into_->write(std::string_view(first->second).substr(static_cast<size_t>(at_ - off)));
      at_ = off + n;
    }
    ahead_bytes_ -= n;
    ahead_.erase(first);
  }
  return true;
}

std::optional<uint64_t> OrderedBytes::gap_end() const {
  if (ahead_.empty()) return std::nullopt;
  return ahead_.begin()->first;
}

}  // namespace mavswitch::services
