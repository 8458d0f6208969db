#include "protocol/signing.hpp"

#include <openssl/sha.h>
#include <time.h>

#include <cstring>

#include "protocol/crc.hpp"
#include "protocol/frame_edit.hpp"

namespace mavswitch::protocol {
namespace {

constexpr uint64_t kEpoch2015 = 1420070400;  // 2015-01-01 00:00:00 UTC, in Unix seconds

// SHA-256(key ‖ signed part ‖ link id ‖ timestamp), first 6 bytes, for a frame laid out in buf
// whose signature trailer starts at `trailer` (the 7 bytes of link id and timestamp are there).
void signature_of(const SigningKey& key, const uint8_t* frame, size_t trailer, uint8_t out[6]) noexcept {
  uint8_t input[32 + kMaxFrameLen];
  std::memcpy(input, key.data(), key.size());
  std::memcpy(input + key.size(), frame, trailer + 7);
  uint8_t digest[SHA256_DIGEST_LENGTH];
  SHA256(input, key.size() + trailer + 7, digest);
  std::memcpy(out, digest, 6);
}

}  // namespace

uint64_t signing_timestamp_now() noexcept {
  timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  const uint64_t secs = static_cast<uint64_t>(ts.tv_sec) - kEpoch2015;
  return secs * 100'000u + static_cast<uint64_t>(ts.tv_nsec) / 10'000u;
}

uint8_t signature_link_id(const FrameView& f) noexcept { return f.signature()[0]; }

uint64_t signature_timestamp(const FrameView& f) noexcept {
  const auto s = f.signature();
  uint64_t t = 0;
  for (int i = 5; i >= 0; --i) t = (t << 8) | s[1 + static_cast<size_t>(i)];
  return t;
}

bool signature_valid(const SigningKey& key, const FrameView& f) noexcept {
  if (!f.is_signed()) return false;
  const size_t trailer = f.header_len() + f.payload_len() + kChecksumLen;
  uint8_t expected[6];
  signature_of(key, f.data(), trailer, expected);
  // Constant time: a mismatch position must not leak through timing.
  uint8_t diff = 0;
  for (size_t i = 0; i < 6; ++i) diff = static_cast<uint8_t>(diff | (expected[i] ^ f.data()[trailer + 7 + i]));
  return diff == 0;
}

size_t sign_frame(const FrameView& f, const SigningKey& key, uint8_t link_id, uint64_t timestamp,
                  std::span<uint8_t> out) noexcept {
  if (!f.is_v2() || out.size() < kMaxFrameLen) return 0;
  const size_t trailer = kHeaderLenV2 + f.payload_len() + kChecksumLen;
  std::memcpy(out.data(), f.data(), trailer);
  uint8_t* o = out.data();
  if (!(o[2] & kIncompatSigned)) set_frame_byte({o, trailer}, 2, static_cast<uint8_t>(o[2] | kIncompatSigned));
  o[trailer] = link_id;
  for (size_t i = 0; i < 6; ++i) o[trailer + 1 + i] = static_cast<uint8_t>(timestamp >> (8 * i));
  signature_of(key, o, trailer, o + trailer + 7);
  return trailer + kSignatureLen;
}

}  // namespace mavswitch::protocol
