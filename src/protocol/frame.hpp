// The MAVLink v1 and v2 frame layouts, and FrameView: a validated frame seen in place, in
// whatever buffer it arrived in. A FrameView never owns bytes; it is valid as long as the buffer.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "protocol/message_table.hpp"

namespace mavswitch::protocol {

inline constexpr uint8_t kMagicV1 = 0xFE;
inline constexpr uint8_t kMagicV2 = 0xFD;
inline constexpr size_t kHeaderLenV1 = 6;   // magic, len, seq, sysid, compid, msgid
inline constexpr size_t kHeaderLenV2 = 10;  // magic, len, incompat, compat, seq, sysid, compid, msgid[3]
inline constexpr size_t kChecksumLen = 2;
inline constexpr size_t kSignatureLen = 13;  // link id (1), timestamp (6), signature (6)
inline constexpr size_t kMaxPayloadLen = 255;
inline constexpr size_t kMaxFrameLen = kHeaderLenV2 + kMaxPayloadLen + kChecksumLen + kSignatureLen;

// Incompatibility flags (v2). A frame carrying any other bit cannot be understood and is dropped.
inline constexpr uint8_t kIncompatSigned = 0x01;
inline constexpr uint8_t kKnownIncompatFlags = kIncompatSigned;

// The length of the frame `p` starts (header, payload, checksum, signature), read from its
// header; 0 when p does not start with a start byte or holds too little of a header to tell.
inline size_t frame_length(const uint8_t* p, size_t avail) noexcept {
  if (avail >= kHeaderLenV2 && p[0] == kMagicV2)
    return kHeaderLenV2 + p[1] + kChecksumLen + ((p[2] & kIncompatSigned) ? kSignatureLen : 0);
  if (avail >= kHeaderLenV1 && p[0] == kMagicV1) return kHeaderLenV1 + p[1] + kChecksumLen;
  return 0;
}

class FrameView {
 public:
  enum Flags : uint8_t {
    kV2 = 1 << 0,
    kVerified = 1 << 1,  // CRC checked with a known CRC_EXTRA; unset: unknown message id
  };

  FrameView() = default;
  FrameView(const uint8_t* data, uint16_t size, uint32_t msgid, uint8_t flags,
            const MessageInfo* info = nullptr) noexcept
      : data_(data), info_(info), size_(size), flags_(flags), msgid_(msgid) {}

  // The same frame over a copy of its bytes (size() of them at `copy`).
  FrameView over(const uint8_t* copy) const noexcept { return FrameView(copy, size_, msgid_, flags_, info_); }

  // The whole frame as it was on the wire (magic to signature), to forward byte for byte.
  std::span<const uint8_t> bytes() const noexcept { return {data_, size_}; }
  const uint8_t* data() const noexcept { return data_; }
  uint16_t size() const noexcept { return size_; }

  bool is_v2() const noexcept { return flags_ & kV2; }
  int version() const noexcept { return is_v2() ? 2 : 1; }
  bool verified() const noexcept { return flags_ & kVerified; }
  uint32_t msgid() const noexcept { return msgid_; }
  // What the dialect says of this message; nullptr for an unknown (unverified) id.
  const MessageInfo* info() const noexcept { return info_; }

  size_t header_len() const noexcept { return is_v2() ? kHeaderLenV2 : kHeaderLenV1; }
  uint8_t payload_len() const noexcept { return data_[1]; }
  uint8_t incompat_flags() const noexcept { return is_v2() ? data_[2] : 0; }
  uint8_t compat_flags() const noexcept { return is_v2() ? data_[3] : 0; }
  bool is_signed() const noexcept { return incompat_flags() & kIncompatSigned; }
  uint8_t seq() const noexcept { return data_[is_v2() ? 4 : 2]; }
  uint8_t sysid() const noexcept { return data_[is_v2() ? 5 : 3]; }
  uint8_t compid() const noexcept { return data_[is_v2() ? 6 : 4]; }

  // The payload as sent: for v2 possibly zero-truncated (decoders pad the tail with zeros).
  std::span<const uint8_t> payload() const noexcept { return {data_ + header_len(), payload_len()}; }
  uint16_t checksum() const noexcept {
    const uint8_t* c = data_ + header_len() + payload_len();
    return static_cast<uint16_t>(c[0] | (c[1] << 8));
  }
  // The byte at `offset` of the payload as the sender meant it: 0 past a truncated end.
  uint8_t payload_byte(int offset) const noexcept {
    return (offset >= 0 && offset < payload_len()) ? data_[header_len() + static_cast<size_t>(offset)] : 0;
  }
  // The 13 signature bytes, or an empty span when the frame is not signed.
  std::span<const uint8_t> signature() const noexcept {
    if (!is_signed()) return {};
    return {data_ + header_len() + payload_len() + kChecksumLen, kSignatureLen};
  }

 private:
  const uint8_t* data_ = nullptr;
  const MessageInfo* info_ = nullptr;
  uint16_t size_ = 0;
  uint8_t flags_ = 0;
  uint32_t msgid_ = 0;
};

}  // namespace mavswitch::protocol
