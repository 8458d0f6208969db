// MAVLink 2 message signing (mavlink.io "Message Signing"): a 13-byte trailer of link id (1),
// timestamp (6, little-endian, units of 10 µs since 2015-01-01 00:00:00 UTC) and signature (6):
// the first 48 bits of SHA-256(secret key ‖ frame up to and including the CRC ‖ link id ‖
// timestamp).
#pragma once

#include <array>
#include <cstdint>
#include <span>

#include "protocol/frame.hpp"

namespace mavswitch::protocol {

using SigningKey = std::array<uint8_t, 32>;

// The signing clock for "now" from the system's real-time clock.
uint64_t signing_timestamp_now() noexcept;

uint8_t signature_link_id(const FrameView& frame) noexcept;     // frame must be signed
uint64_t signature_timestamp(const FrameView& frame) noexcept;  // frame must be signed

// True when the frame is signed and its signature matches `key`.
bool signature_valid(const SigningKey& key, const FrameView& frame) noexcept;

// Writes `frame` (MAVLink 2, signed or not) signed with `key` into out (kMaxFrameLen bytes):
// the signed flag set, the checksum adjusted for it, any old signature replaced. Works for
// message ids the dialect does not know (the checksum is corrected, not recomputed). Returns
// the new length, or 0 for a MAVLink 1 frame (which cannot be signed).
size_t sign_frame(const FrameView& frame, const SigningKey& key, uint8_t link_id, uint64_t timestamp,
                  std::span<uint8_t> out) noexcept;

}  // namespace mavswitch::protocol
