// A component's default interval for one message, asked as a transaction: GET_MESSAGE_INTERVAL
// (a COMMAND_LONG, sent again after a silence), answered by MESSAGE_INTERVAL for that message.
// A COMMAND_ACK that refuses it ends it at once: the default stays unknown.
#pragma once

#include <optional>

#include "library/command_exchange.hpp"

namespace mavswitch::rates {

class IntervalProbe final : public RepeatedRequest {
 public:
  static constexpr uint16_t kGetMessageInterval = 510;  // MAV_CMD_GET_MESSAGE_INTERVAL

  IntervalProbe(uint8_t system, uint8_t component, uint32_t message, int tries)
      : command_{system, component, kGetMessageInterval, {static_cast<float>(message)}},
        message_(message),
        tries_(tries) {}
  // What it said: the interval in µs, -1 for off, 0 for "not sent by default"; none if not said.
  std::optional<int32_t> interval_us() const noexcept { return interval_us_; }

  std::vector<Listen> listens() const override;
  Step heard(const protocol::FrameView& frame, Component& from) override;
  int tries() const override { return tries_; }

 private:
  void send(Component& from) override { CommandExchange::send(from, command_, sent_++); }
  CommandExchange::Command command_;
  uint32_t message_;
  int tries_;
  uint8_t sent_ = 0;
  std::optional<int32_t> interval_us_;
};

}  // namespace mavswitch::rates
