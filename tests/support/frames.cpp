#include "support/frames.hpp"

#include "mavswitch/msg/attitude.hpp"
#include "mavswitch/msg/command_long.hpp"
#include "mavswitch/msg/file_transfer_protocol.hpp"
#include "mavswitch/msg/heartbeat.hpp"
#include "mavswitch/msg/system_time.hpp"

namespace mavswitch::test {

Bytes heartbeat(uint8_t sys, uint8_t comp, uint8_t seq) {
  msg::Heartbeat hb;
  hb.type = 2;
  hb.autopilot = 3;
  return frame_of(hb, sys, comp, seq);
}

Bytes command_long(uint8_t sys, uint8_t comp, uint8_t target_sys, uint8_t target_comp, uint8_t seq) {
  msg::CommandLong c;
  c.target_system = target_sys;
  c.target_component = target_comp;
  c.command = 400;
  c.param1 = 1;
  return frame_of(c, sys, comp, seq);
}

Bytes large_frame(uint8_t sys, uint8_t comp, uint8_t seq) {
  msg::FileTransferProtocol f;
  for (size_t i = 0; i < f.payload.size(); ++i) f.payload[i] = static_cast<uint8_t>(i * 7 + seq + 1);
  f.target_network = 1;
  return frame_of(f, sys, comp, seq);
}

Bytes attitude(uint8_t sys, uint8_t comp, uint32_t time_boot_ms, uint8_t seq) {
  msg::Attitude a;
  a.time_boot_ms = time_boot_ms;
  a.roll = 0.5f;
  return frame_of(a, sys, comp, seq);
}

Bytes system_time(uint8_t sys, uint8_t comp, uint32_t time_boot_ms, uint8_t seq) {
  msg::SystemTime t;
  t.time_boot_ms = time_boot_ms;
  return frame_of(t, sys, comp, seq);
}

}  // namespace mavswitch::test
