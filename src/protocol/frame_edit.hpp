// Changing a byte of a whole frame in place, its checksum kept right: the fleet fabric renumbers
// vehicles (a source system, a target system) and signing sets the signed flag this way.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

namespace mavswitch::protocol {

// Sets frame[offset] (a byte under the checksum: the header after the magic byte, or the
// payload) to `value` and corrects the checksum for it. CRC-16 is affine, so for inputs of equal
// length crc(a) ^ crc(b) == crc0(a ^ b): the correction is the CRC of the one-byte change, and
// needs no CRC_EXTRA (works for ids the dialect does not know). A signature no longer matches
// after it: sign the frame again. `frame` must hold a whole frame (header, payload, checksum).
void set_frame_byte(std::span<uint8_t> frame, size_t offset, uint8_t value) noexcept;

}  // namespace mavswitch::protocol
