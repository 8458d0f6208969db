// Renumbering a frame in place (the fleet fabric's vehicles): the result is byte for byte what
// the encoder makes for the new numbers, for MAVLink 1 and 2, for every byte under the checksum.
#include <gtest/gtest.h>

#include "dialect/builtin.hpp"
#include "mavswitch/msg/command_long.hpp"
#include "protocol/frame_edit.hpp"
#include "protocol/parser.hpp"
#include "support/frames.hpp"

using namespace mavswitch;
using namespace mavswitch::test;

TEST(FrameEdit, ARenumberedFrameIsTheOneEncodedWithTheNewNumbers) {
  for (const bool v1 : {false, true}) {
    msg::CommandLong c;
    c.target_system = 12;
    c.target_component = 1;
    c.command = 400;
    c.param1 = 1;
    Bytes edited = frame_of(c, 1, 190, 9, v1);
    const size_t header = v1 ? protocol::kHeaderLenV1 : protocol::kHeaderLenV2;
    const size_t sysid_at = v1 ? 3 : 5;
    protocol::set_frame_byte(edited, sysid_at, 7);
    protocol::set_frame_byte(edited, header + 30, 1);  // target_system: after seven floats and the command
    c.target_system = 1;
    EXPECT_EQ(edited, frame_of(c, 7, 190, 9, v1)) << (v1 ? "MAVLink 1" : "MAVLink 2");
  }
}

TEST(FrameEdit, EverySequenceIdOrPayloadByteCanChange) {
  const Bytes original = command_long(255, 190, 12, 1, 3);
  const size_t checksum_at = original.size() - protocol::kChecksumLen;
  std::vector<size_t> places = {4, 5, 6};  // sequence, system, component
  for (size_t at = protocol::kHeaderLenV2; at < checksum_at; ++at) places.push_back(at);
  for (const size_t at : places) {
    Bytes edited = original;
    protocol::set_frame_byte(edited, at, static_cast<uint8_t>(original[at] ^ 0x5A));
    const auto probe = protocol::probe_frame(dialect::builtin::message_table(), edited.data(), edited.size());
    ASSERT_EQ(probe.status, protocol::Probe::Status::kFrame) << "byte " << at << ": its checksum checks";
  }
}
