// Builds frames from header fields and a payload: the inverse of the parser. Used by the typed
// messages, the in-process API and the tools; the router itself forwards frames byte for byte.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "protocol/frame.hpp"

namespace mavswitch::protocol {

struct FrameHeader {
  uint8_t seq = 0;
  uint8_t sysid = 0;
  uint8_t compid = 0;
  uint32_t msgid = 0;
  uint8_t incompat_flags = 0;  // kIncompatSigned reserves the 13-byte signature slot
  uint8_t compat_flags = 0;
};

// Writes a MAVLink 2 frame into out (at least kMaxFrameLen bytes) and returns its length.
// Trailing zero bytes of the payload are dropped as the spec requires (never the first byte).
// With kIncompatSigned set, the signature slot after the checksum is zero-filled and counted in
// the length; the signer fills it.
size_t encode_v2(const FrameHeader& header, std::span<const uint8_t> payload, uint8_t crc_extra,
                 std::span<uint8_t> out) noexcept;

// Writes a MAVLink 1 frame (header.msgid must be below 256; flags are ignored).
size_t encode_v1(const FrameHeader& header, std::span<const uint8_t> payload, uint8_t crc_extra,
                 std::span<uint8_t> out) noexcept;

// The v2 payload length after zero truncation.
constexpr size_t truncated_payload_len(std::span<const uint8_t> payload) noexcept {
  size_t n = payload.size();
  while (n > 1 && payload[n - 1] == 0) --n;
  return n;
}

}  // namespace mavswitch::protocol
