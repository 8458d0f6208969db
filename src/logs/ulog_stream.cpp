#include "logs/ulog_stream.hpp"

#include <algorithm>
#include <cstring>

namespace mavswitch::logs {
namespace {

constexpr uint8_t kMagic[7] = {'U', 'L', 'o', 'g', 0x01, 0x12, 0x35};
constexpr size_t kMessageHeaderLen = 3;  // uint16 msg_size, uint8 msg_type
constexpr uint8_t kDropout = 'O';

size_t message_size(const uint8_t* header) { return kMessageHeaderLen + (size_t{header[0]} | size_t{header[1]} << 8); }

}  // namespace

UlogStream::Take UlogStream::packet(uint16_t sequence, std::span<const uint8_t> data, uint8_t first_message_offset,
                                    uint64_t now_ms, Sink out) {
  if (!started_) {
    // A log is taken from its beginning only: the header is the first message of the stream.
    if (first_message_offset != 0 || data.size() < sizeof kMagic) return Take::kBeforeHeader;
    if (std::memcmp(data.data(), kMagic, sizeof kMagic) != 0) return Take::kBadHeader;
    started_ = true;
    header_left_ = kHeaderLen;
    expected_ = sequence;
  }
  const auto ahead = static_cast<int16_t>(static_cast<uint16_t>(sequence - expected_));
  if (ahead < 0) {
    ++stats_.retransmissions;
    return Take::kRetransmission;
  }
  ++stats_.packets;
  if (ahead > 0 && header_left_ > 0) {  // the header itself was cut: wait for a stream that has one
    stats_.lost_packets += static_cast<uint64_t>(ahead);
    started_ = false;
    partial_.clear();
    return Take::kBeforeHeader;
  }
  if (ahead > 0) {  // packets lost: the message being put together cannot be finished
    stats_.lost_packets += static_cast<uint64_t>(ahead);
    if (!resyncing_) gap_began_ms_ = last_packet_ms_;
    resyncing_ = true;
    partial_.clear();
  }
  expected_ = static_cast<uint16_t>(sequence + 1);
  last_packet_ms_ = now_ms;
  if (resyncing_) {
    if (first_message_offset == kNoMessageStart || first_message_offset >= data.size()) return Take::kTaken;
    const uint64_t gap = std::min<uint64_t>(now_ms - gap_began_ms_, 0xFFFF);
    const uint8_t dropout[] = {2, 0, kDropout, static_cast<uint8_t>(gap), static_cast<uint8_t>(gap >> 8)};
    out(dropout);
    stats_.bytes += sizeof dropout;
    ++stats_.dropouts;
    resyncing_ = false;
    data = data.subspan(first_message_offset);
  }
  feed(data, out);
  return Take::kTaken;
}

// Hands out the header, then each message once it is whole.
void UlogStream::feed(std::span<const uint8_t> bytes, Sink& out) {
  if (header_left_ > 0) {  // handed out whole, like every message
    const size_t n = std::min(header_left_, bytes.size());
    partial_.insert(partial_.end(), bytes.begin(), bytes.begin() + static_cast<std::ptrdiff_t>(n));
    header_left_ -= n;
    bytes = bytes.subspan(n);
    if (header_left_ > 0) return;
    out(partial_);
    stats_.bytes += partial_.size();
    partial_.clear();
  }
  while (!bytes.empty()) {
    if (partial_.empty() && bytes.size() >= kMessageHeaderLen) {  // whole messages straight from the packet
      const size_t len = message_size(bytes.data());
      if (bytes.size() >= len) {
        out(bytes.first(len));
        stats_.bytes += len;
        bytes = bytes.subspan(len);
        continue;
      }
    }
    // Across packets: first the message header, then as much of the message as it says.
    auto wanted = [&] {
      return partial_.size() < kMessageHeaderLen ? kMessageHeaderLen : message_size(partial_.data());
    };
    const size_t n = std::min(wanted() - partial_.size(), bytes.size());
    partial_.insert(partial_.end(), bytes.begin(), bytes.begin() + static_cast<std::ptrdiff_t>(n));
    bytes = bytes.subspan(n);
    if (partial_.size() >= kMessageHeaderLen && partial_.size() == wanted()) {
      out(partial_);
      stats_.bytes += partial_.size();
      partial_.clear();
    }
  }
}

}  // namespace mavswitch::logs
