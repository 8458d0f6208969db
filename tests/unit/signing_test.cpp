// MAVLink 2 signing, against frames node-mavlink (an independent implementation) signed.
#include <gtest/gtest.h>

#include "dialect/builtin.hpp"
#include "protocol/encoder.hpp"
#include "protocol/parser.hpp"
#include "protocol/signing.hpp"

using namespace mavswitch::protocol;

namespace {

std::vector<uint8_t> hex(std::string_view h) {
  std::vector<uint8_t> out;
  for (size_t i = 0; i + 1 < h.size(); i += 2)
    out.push_back(static_cast<uint8_t>(std::stoi(std::string(h.substr(i, 2)), nullptr, 16)));
  return out;
}

SigningKey key_from_hex(std::string_view h) {
  SigningKey k{};
  const auto b = hex(h);
  std::copy(b.begin(), b.end(), k.begin());
  return k;
}

// node-mavlink: key = SHA-256("mavswitch test key"); HEARTBEAT from 1/1, seq 5, signed with
// link id 3 at 2023-11-14T22:13:20Z.
const SigningKey kKey = key_from_hex("0b1f5ced1f7e9bc8110c231edeef8e447c7936496e94b46bca33522c112acd2b");
const auto kSigned = hex("fd09010005010100000007000000020351040387840300e06f9e7519efd5104137f2");
const auto kPlain = hex("fd090000050101000000070000000203510403607c");
constexpr uint64_t kTimestamp = (1700000000000ull - 1420070400000ull) * 100;

FrameView view(const std::vector<uint8_t>& bytes) {
  const auto p = probe_frame(mavswitch::dialect::builtin::message_table(), bytes.data(), bytes.size());
  EXPECT_EQ(p.status, Probe::Status::kFrame);
  return p.frame;
}

}  // namespace

TEST(Signing, VerifiesAFrameNodeMavlinkSigned) {
  const FrameView f = view(kSigned);
  ASSERT_TRUE(f.is_signed());
  EXPECT_EQ(signature_link_id(f), 3);
  EXPECT_EQ(signature_timestamp(f), kTimestamp);
  EXPECT_TRUE(signature_valid(kKey, f));
}

TEST(Signing, RejectsATamperedFrameOrAnotherKey) {
  auto tampered = kSigned;
  tampered[tampered.size() - 1] ^= 1;  // the signature itself
  EXPECT_FALSE(signature_valid(kKey, view(tampered)));
  auto stamp = kSigned;
  stamp[stamp.size() - 8] ^= 1;  // the timestamp is under the signature
  EXPECT_FALSE(signature_valid(kKey, view(stamp)));
  SigningKey other = kKey;
  other[0] ^= 1;
  EXPECT_FALSE(signature_valid(other, view(kSigned)));
  EXPECT_FALSE(signature_valid(kKey, view(kPlain))) << "unsigned is not valid";
}

TEST(Signing, SigningAnUnsignedFrameGivesTheSameBytesAsNodeMavlink) {
  uint8_t out[kMaxFrameLen];
  const size_t n = sign_frame(view(kPlain), kKey, 3, kTimestamp, out);
  EXPECT_EQ(std::vector<uint8_t>(out, out + n), kSigned);
}

TEST(Signing, ResigningReplacesTheSignature) {
  SigningKey mine{};
  mine.fill(0x42);
  uint8_t out[kMaxFrameLen];
  const size_t n = sign_frame(view(kSigned), mine, 9, kTimestamp + 100, out);
  ASSERT_EQ(n, kSigned.size());
  const std::vector<uint8_t> resigned(out, out + n);
  const FrameView f = view(resigned);
  EXPECT_TRUE(f.verified()) << "checksum still right";
  EXPECT_TRUE(signature_valid(mine, f));
  EXPECT_FALSE(signature_valid(kKey, f));
  EXPECT_EQ(signature_link_id(f), 9);
}

TEST(Signing, WorksForMessageIdsTheDialectDoesNotKnow) {
  // The checksum is corrected without knowing CRC_EXTRA: compare with a frame encoded signed
  // from the start with that (private) CRC_EXTRA.
  const uint8_t payload[6] = {1, 2, 3, 4, 5, 6};
  uint8_t plain[kMaxFrameLen], direct[kMaxFrameLen], signed_frame[kMaxFrameLen];
  const size_t np = encode_v2({.seq = 1, .sysid = 2, .compid = 3, .msgid = 0x0ABCDE}, payload, 0x77, plain);
  const size_t nd = encode_v2({.seq = 1, .sysid = 2, .compid = 3, .msgid = 0x0ABCDE, .incompat_flags = kIncompatSigned},
                              payload, 0x77, direct);
  const FrameView unknown(plain, static_cast<uint16_t>(np), 0x0ABCDE, FrameView::kV2);
  const size_t ns = sign_frame(unknown, kKey, 1, 12345, signed_frame);
  ASSERT_EQ(ns, nd);
  EXPECT_EQ(std::vector<uint8_t>(signed_frame, signed_frame + ns - kSignatureLen),
            std::vector<uint8_t>(direct, direct + nd - kSignatureLen));
}

TEST(Signing, MavlinkOneCannotBeSigned) {
  const uint8_t payload[9] = {};
  uint8_t v1[kMaxFrameLen], out[kMaxFrameLen];
  const size_t n = encode_v1({.msgid = 0}, payload, 50, v1);
  EXPECT_EQ(sign_frame(view(std::vector<uint8_t>(v1, v1 + n)), kKey, 0, 1, out), 0u);
}

TEST(Signing, ClockCountsTensOfMicrosecondsSince2015) {
  const uint64_t t = signing_timestamp_now();
  EXPECT_GT(t, (1700000000ull - 1420070400ull) * 100'000u);  // after November 2023
  EXPECT_LT(t, (4102444800ull - 1420070400ull) * 100'000u);  // before 2100
}
