// The encoder, against frames another implementation produced.
#include <gtest/gtest.h>

#include <cstring>

#include "dialect/builtin.hpp"
#include "dialect/typed_message.hpp"
#include "mavswitch/msg/command_long.hpp"
#include "mavswitch/msg/heartbeat.hpp"
#include "protocol/encoder.hpp"
#include "support/test_support.hpp"

using namespace mavswitch;

namespace {

std::vector<uint8_t> from_hex(std::string_view hex) {
  std::vector<uint8_t> out;
  for (size_t i = 0; i + 1 < hex.size(); i += 2)
    out.push_back(static_cast<uint8_t>(std::stoi(std::string(hex.substr(i, 2)), nullptr, 16)));
  return out;
}

template <class M>
std::vector<uint8_t> encode(const M& m, protocol::FrameHeader h, bool v1 = false) {
  std::vector<uint8_t> out(protocol::kMaxFrameLen);
  out.resize(dialect::typed::encode_frame(m, h, out, v1));
  return out;
}

msg::Heartbeat sample_heartbeat() {
  msg::Heartbeat hb;
  hb.type = 2;
  hb.autopilot = 3;
  hb.base_mode = 81;
  hb.custom_mode = 65536 * 3 + 7;
  hb.system_status = 4;
  hb.mavlink_version = 3;
  return hb;
}

}  // namespace

// Vectors produced by the npm package node-mavlink (an independent implementation).
TEST(Encoder, HeartbeatV2MatchesNodeMavlink) {
  EXPECT_EQ(encode(sample_heartbeat(), {.seq = 42, .sysid = 255, .compid = 190}),
            from_hex("fd0900002affbe0000000700030002035104030197"));
}

TEST(Encoder, HeartbeatV1MatchesNodeMavlink) {
  EXPECT_EQ(encode(sample_heartbeat(), {.seq = 42, .sysid = 255, .compid = 190}, true),
            from_hex("fe092affbe000700030002035104038946"));
}

TEST(Encoder, CommandLongV2IsZeroTruncatedLikeNodeMavlink) {
  msg::CommandLong cmd;
  cmd.target_system = 1;
  cmd.target_component = 1;
  cmd.command = 400;
  cmd.param1 = 1.0f;
  EXPECT_EQ(encode(cmd, {.seq = 7, .sysid = 255, .compid = 190}),
            from_hex("fd20000007ffbe4c00000000803f0000000000000000000000000000000000000000000000009001010105b2"));
}

TEST(Encoder, AllZeroPayloadKeepsItsFirstByte) {
  msg::Heartbeat zero;
  zero.mavlink_version = 0;
  const auto f = encode(zero, {});
  EXPECT_EQ(f[1], 1);  // payload length
  EXPECT_EQ(f.size(), protocol::kHeaderLenV2 + 1 + protocol::kChecksumLen);
}

TEST(Encoder, SignedFlagReservesTheSignatureSlot) {
  const auto f = encode(sample_heartbeat(), {.incompat_flags = protocol::kIncompatSigned});
  const auto plain = encode(sample_heartbeat(), {});
  EXPECT_EQ(f.size(), plain.size() + protocol::kSignatureLen);
  EXPECT_EQ(f[2], protocol::kIncompatSigned);
}

// Every frame of the captures, re-encoded from its header and payload, is the same bytes: the
// checksum and v2 zero truncation agree with the autopilots that sent them.
TEST(Encoder, ReencodingEveryCapturedFrameGivesTheSameBytes) {
  int checked = 0;
  for (const char* file : {"mavlink-v2-3412-packets.bin", "GH-5.bin"}) {
    const auto data = test::read_bytes(test::captures_dir() / file);
    protocol::FrameParser parser(dialect::builtin::message_table());
    parser.feed(data, [&](const protocol::FrameView& f) {
      const auto* info = dialect::builtin::message_table().find(f.msgid());
      ASSERT_NE(info, nullptr);
      uint8_t payload[protocol::kMaxPayloadLen] = {};
      std::memcpy(payload, f.payload().data(), f.payload().size());
      const protocol::FrameHeader h{.seq = f.seq(),
                                    .sysid = f.sysid(),
                                    .compid = f.compid(),
                                    .msgid = f.msgid(),
                                    .incompat_flags = f.incompat_flags(),
                                    .compat_flags = f.compat_flags()};
      std::vector<uint8_t> out(protocol::kMaxFrameLen);
      const size_t n = f.is_v2() ? protocol::encode_v2(h, {payload, info->max_len}, info->crc_extra, out)
                                 : protocol::encode_v1(h, {payload, f.payload().size()}, info->crc_extra, out);
      out.resize(n);
      ASSERT_EQ(out, std::vector<uint8_t>(f.bytes().begin(), f.bytes().end())) << info->name;
      ++checked;
    });
  }
  EXPECT_EQ(checked, 3412 + 138);
}
