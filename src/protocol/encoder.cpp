#include "protocol/encoder.hpp"

#include <cassert>
#include <cstring>

#include "protocol/crc.hpp"

namespace mavswitch::protocol {
namespace {

size_t finish_frame(uint8_t* f, size_t header_len, size_t payload_len, uint8_t crc_extra) {
  const size_t crc_pos = header_len + payload_len;
  uint16_t crc = crc16(f + 1, crc_pos - 1);
  crc = crc16_accumulate(crc_extra, crc);
  f[crc_pos] = static_cast<uint8_t>(crc & 0xFF);
  f[crc_pos + 1] = static_cast<uint8_t>(crc >> 8);
  return crc_pos + kChecksumLen;
}

}  // namespace

size_t encode_v2(const FrameHeader& h, std::span<const uint8_t> payload, uint8_t crc_extra,
                 std::span<uint8_t> out) noexcept {
  assert(out.size() >= kMaxFrameLen && payload.size() <= kMaxPayloadLen);
  const size_t len = truncated_payload_len(payload);
  uint8_t* f = out.data();
  f[0] = kMagicV2;
  f[1] = static_cast<uint8_t>(len);
  f[2] = h.incompat_flags;
  f[3] = h.compat_flags;
  f[4] = h.seq;
  f[5] = h.sysid;
  f[6] = h.compid;
  f[7] = static_cast<uint8_t>(h.msgid & 0xFF);
  f[8] = static_cast<uint8_t>((h.msgid >> 8) & 0xFF);
  f[9] = static_cast<uint8_t>((h.msgid >> 16) & 0xFF);
  if (len > 0) std::memcpy(f + kHeaderLenV2, payload.data(), len);
  size_t n = finish_frame(f, kHeaderLenV2, len, crc_extra);
  if (h.incompat_flags & kIncompatSigned) {
    std::memset(f + n, 0, kSignatureLen);
    n += kSignatureLen;
  }
  return n;
}

size_t encode_v1(const FrameHeader& h, std::span<const uint8_t> payload, uint8_t crc_extra,
                 std::span<uint8_t> out) noexcept {
  assert(out.size() >= kMaxFrameLen && payload.size() <= kMaxPayloadLen && h.msgid < 256);
  uint8_t* f = out.data();
  f[0] = kMagicV1;
  f[1] = static_cast<uint8_t>(payload.size());
  f[2] = h.seq;
  f[3] = h.sysid;
  f[4] = h.compid;
  f[5] = static_cast<uint8_t>(h.msgid);
  if (!payload.empty()) std::memcpy(f + kHeaderLenV1, payload.data(), payload.size());
  return finish_frame(f, kHeaderLenV1, payload.size(), crc_extra);
}

}  // namespace mavswitch::protocol
