// CRC-16/MCRF4XX (the "X.25" checksum of the MAVLink spec): reflected polynomial 0x1021,
// initial value 0xFFFF, no final xor. Frames are checked over header (minus the magic byte)
// and payload, then the message's CRC_EXTRA byte is folded in.
#pragma once

#include <cstddef>
#include <cstdint>

namespace mavswitch::protocol {

inline constexpr uint16_t kCrcInit = 0xFFFF;

// One byte, exactly as the spec writes it. Used for CRC_EXTRA and as the reference in tests.
constexpr uint16_t crc16_accumulate(uint8_t byte, uint16_t crc) noexcept {
  uint8_t tmp = static_cast<uint8_t>(byte ^ static_cast<uint8_t>(crc & 0xFF));
  tmp = static_cast<uint8_t>(tmp ^ static_cast<uint8_t>(tmp << 4));
  return static_cast<uint16_t>((crc >> 8) ^ (tmp << 8) ^ (tmp << 3) ^ (tmp >> 4));
}

// Many bytes at once (slicing-by-16: sixteen table lookups per sixteen bytes instead of a serial
// dependency per byte). Same result as folding crc16_accumulate over the bytes.
uint16_t crc16(const uint8_t* data, size_t len, uint16_t crc = kCrcInit) noexcept;

}  // namespace mavswitch::protocol
