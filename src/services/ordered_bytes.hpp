// Bytes that come by offset in any order (a MAVFTP burst, a log's LOG_DATA through a lossy
// link), given on to a ByteStream in order. What comes past a gap is kept (`max_ahead` bytes at
// most; more is dropped, to be asked for again) until the gap is filled. Nothing is taken while
// the stream has no room: it holds its capacity and one packet at most. The router's thread.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "base/byte_stream.hpp"

namespace mavswitch::services {

class OrderedBytes {
 public:
  OrderedBytes(std::shared_ptr<ByteStream> into, uint64_t start, size_t max_ahead)
      : into_(std::move(into)), at_(start), max_ahead_(max_ahead) {}
  // Nothing at or past `limit` is given on (a file's size when it was opened, a range's end).
  void limit(uint64_t end) { limit_ = end; }
  // True when it kept something it did not have: bytes a peer sends again are not progress.
  bool put(uint64_t offset, std::string_view bytes);
  // Where the bytes given on end: the next offset wanted.
  uint64_t at() const noexcept { return at_; }
  // Where the first gap ends (the first byte kept past it); nothing when none is kept.
  std::optional<uint64_t> gap_end() const;
  ByteStream& stream() noexcept { return *into_; }

 private:
  std::shared_ptr<ByteStream> into_;
  uint64_t at_;
  uint64_t limit_ = UINT64_MAX;
  size_t max_ahead_;
  std::map<uint64_t, std::string> ahead_;  // by offset
  size_t ahead_bytes_ = 0;
};

}  // namespace mavswitch::services
