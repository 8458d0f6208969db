// Whole frames, back to back, and each one's size: a batch that crosses between threads at once
// (base/handover.hpp), to a WebSocket client, from a library's sender, to a queued subscriber.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace mavswitch::protocol {

struct FrameBatch {
  std::vector<uint8_t> bytes;
  std::vector<uint16_t> sizes;
  bool empty() const noexcept { return sizes.empty(); }
  size_t size() const noexcept { return sizes.size(); }
  void clear() noexcept { bytes.clear(), sizes.clear(); }
  void add(std::span<const uint8_t> frame) {
    bytes.insert(bytes.end(), frame.begin(), frame.end());
    sizes.push_back(static_cast<uint16_t>(frame.size()));
  }
  void append(const FrameBatch& more) {
    bytes.insert(bytes.end(), more.bytes.begin(), more.bytes.end());
    sizes.insert(sizes.end(), more.sizes.begin(), more.sizes.end());
  }
};

}  // namespace mavswitch::protocol
