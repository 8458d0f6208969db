#include "protocol/frame_edit.hpp"

#include <cassert>

#include "protocol/crc.hpp"
#include "protocol/frame.hpp"

namespace mavswitch::protocol {

void set_frame_byte(std::span<uint8_t> frame, size_t offset, uint8_t value) noexcept {
  const size_t header = frame[0] == kMagicV2 ? kHeaderLenV2 : kHeaderLenV1;
  const size_t checksum_at = header + frame[1];
  assert(offset >= 1 && offset < checksum_at && checksum_at + kChecksumLen <= frame.size());
  const uint8_t change = static_cast<uint8_t>(frame[offset] ^ value);
  if (change == 0) return;
  // The change's CRC from init 0: the zeros before it leave 0, so it starts at the change and
  // runs over the rest of the checked span (up to the checksum, then CRC_EXTRA's place).
  static constexpr uint8_t kZeros[kHeaderLenV2 + kMaxPayloadLen] = {};
  uint16_t fix = crc16(&change, 1, 0);
  fix = crc16(kZeros, checksum_at - offset - 1 + 1, fix);
  frame[offset] = value;
  const uint16_t crc = static_cast<uint16_t>((frame[checksum_at] | (frame[checksum_at + 1] << 8)) ^ fix);
  frame[checksum_at] = static_cast<uint8_t>(crc & 0xFF);
  frame[checksum_at + 1] = static_cast<uint8_t>(crc >> 8);
}

}  // namespace mavswitch::protocol
