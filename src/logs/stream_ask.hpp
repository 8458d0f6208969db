// Asking the autopilot to start or stop its log stream, as a transaction on the writer's engine
// (library/transactions.hpp), sent again every kAskEvery ms until answered. ULog: MAV_CMD_LOGGING_START
// or STOP, answered by its COMMAND_ACK (a start also by the first log packet). Dataflash:
// REMOTE_LOG_BLOCK_STATUS with START or STOP, which has no answer of its own: a start is answered
// by the first block, a stop is sent kStopTries times. A start is asked until the stream comes
// (an autopilot's logger may start later than its heartbeat); a refused start is asked again.
#pragma once

#include <climits>

#include "library/command_exchange.hpp"

namespace mavswitch::logs {

class StreamAsk final : public RepeatedRequest {
 public:
  static constexpr routing::Millis kAskEvery = 500;
  static constexpr int kStopTries = 10;
  static constexpr const char* kKind = "log stream";

  // `to`: the autopilot; `blocks_from`: dataflash's log component (its blocks' source, where
  // block statuses go).
  StreamAsk(bool dataflash, bool start, uint8_t to, uint8_t blocks_from)
      : dataflash_(dataflash), start_(start), to_(to), blocks_from_(blocks_from) {}
  // Where its answers come from: ULog's from the autopilot, dataflash's blocks from the
  // autopilot's own component or its log component (0: any of the system's).
  static uint8_t answerer(bool dataflash) { return dataflash ? 0 : 1; }

  std::vector<Listen> listens() const override;
  Step heard(const protocol::FrameView& frame, Component& from) override;
  routing::Millis retry_ms() const override { return kAskEvery; }
  int tries() const override { return start_ ? INT_MAX : kStopTries; }

 private:
  void send(Component& from) override;
  bool dataflash_, start_;
  uint8_t to_, blocks_from_;
  uint8_t sent_ = 0;
};

}  // namespace mavswitch::logs
