// The tests' one frame builder: a typed message (generated from the XML) encoded as a MAVLink
// frame by the library's own encoder, and the handful of frames most tests send.
#pragma once

#include <cstdint>
#include <vector>

#include "dialect/builtin.hpp"
#include "dialect/typed_message.hpp"
#include "protocol/frame.hpp"
#include "protocol/parser.hpp"

namespace mavswitch::test {

using Bytes = std::vector<uint8_t>;

template <class M>
Bytes frame_of(const M& m, protocol::FrameHeader header, bool v1 = false) {
  Bytes b(protocol::kMaxFrameLen);
  b.resize(dialect::typed::encode_frame(m, header, b, v1));
  return b;
}
template <class M>
Bytes frame_of(const M& m, uint8_t sys, uint8_t comp, uint8_t seq = 0, bool v1 = false) {
  return frame_of(m, protocol::FrameHeader{.seq = seq, .sysid = sys, .compid = comp}, v1);
}

// A view of whole frame bytes, as the parser would hand it (checked with the built-in dialect).
inline protocol::FrameView view_of(const Bytes& b) {
  return protocol::probe_frame(dialect::builtin::message_table(), b.data(), b.size()).frame;
}

Bytes heartbeat(uint8_t sys, uint8_t comp, uint8_t seq = 0);  // a quadrotor, ArduPilot
Bytes command_long(uint8_t sys, uint8_t comp, uint8_t target_sys, uint8_t target_comp, uint8_t seq = 0);
Bytes attitude(uint8_t sys, uint8_t comp, uint32_t time_boot_ms, uint8_t seq = 0);
Bytes large_frame(uint8_t sys, uint8_t comp, uint8_t seq = 0);  // FILE_TRANSFER_PROTOCOL, 265 bytes, broadcast
Bytes system_time(uint8_t sys, uint8_t comp, uint32_t time_boot_ms, uint8_t seq = 0);

}  // namespace mavswitch::test
