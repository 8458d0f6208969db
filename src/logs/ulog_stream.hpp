// PX4's ULog, streamed over MAVLink (LOGGING_DATA / LOGGING_DATA_ACKED), put back together as
// whole ULog messages. Each packet carries a 16-bit sequence number and the offset of the first
// message that starts in it (255: none). Retransmissions are recognised by their sequence and
// skipped; after a gap the partial message is dropped, the stream resumes at the next message
// start, and a dropout message ('O', the gap's duration in ms) is written where the gap was, as
// PX4's logger writes one on its SD card, so ULog readers show it.
// Pure: no I/O, time passed in; what is to be written goes to a sink.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "protocol/function_ref.hpp"

namespace mavswitch::logs {

struct UlogStreamStats {
  uint64_t packets = 0;  // taken, retransmissions excluded
  uint64_t retransmissions = 0;
  uint64_t lost_packets = 0;  // sequence numbers never seen
  uint64_t dropouts = 0;      // dropout messages written
  uint64_t bytes = 0;         // handed to the sink
};

class UlogStream {
 public:
  using Sink = FunctionRef<void(std::span<const uint8_t>)>;
  enum class Take { kTaken, kRetransmission, kBeforeHeader, kBadHeader };

  // One packet's payload (`length` bytes of data), received at now_ms.
  Take packet(uint16_t sequence, std::span<const uint8_t> data, uint8_t first_message_offset, uint64_t now_ms,
              Sink out);
  const UlogStreamStats& stats() const noexcept { return stats_; }

  static constexpr uint8_t kNoMessageStart = 255;
  static constexpr size_t kHeaderLen = 16;  // magic (7), version, timestamp (8)

 private:
  void feed(std::span<const uint8_t> bytes, Sink& out);

  bool started_ = false;
  bool resyncing_ = false;  // after a gap: waiting for a message start
  uint16_t expected_ = 0;
  uint64_t last_packet_ms_ = 0;
  uint64_t gap_began_ms_ = 0;
  size_t header_left_ = 0;
  std::vector<uint8_t> partial_;  // the message being put together: at most 3 + 65,535 bytes
  UlogStreamStats stats_;
};

}  // namespace mavswitch::logs
