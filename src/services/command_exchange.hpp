// MAVLink's command protocol as an Exchange: a COMMAND_LONG, sent again with `confirmation`
// counted up until its COMMAND_ACK comes (kTries, kRetryMs apart). An IN_PROGRESS ack stops the
// resends and waits for the final one (kProgressMs after the first IN_PROGRESS, however many
// more come). Run it as kind "command:ID": one command of an id to a component at a time, as
// the protocol asks.
#pragma once

#include <array>

#include "services/transactions.hpp"

namespace mavswitch::services {

class CommandExchange final : public Exchange {
 public:
  static constexpr int kTries = 5;
  static constexpr routing::Millis kRetryMs = 1000;
  static constexpr routing::Millis kProgressMs = 10'000;

  struct Command {
    uint8_t system = 0, component = 0;
    uint16_t command = 0;
    std::array<float, 7> params{};
  };
  // What came back: `acknowledged` false when no final ack came.
  struct Outcome {
    bool acknowledged = false;
    uint8_t result = 0;  // MAV_RESULT
    uint8_t progress = 0;
    int32_t result_param2 = 0;
    int attempts = 0;
  };

  explicit CommandExchange(const Command& c) : command_(c) {}
  static std::string kind(uint16_t command) { return "command:" + std::to_string(command); }
  const Outcome& outcome() const noexcept { return outcome_; }

  std::vector<Listen> listens() const override;
  void start(Component& from) override { send(from); }
  Step heard(const protocol::FrameView& frame, Component& from) override;
  bool silent(Component& from) override;
  routing::Millis retry_ms() const override { return in_progress_ ? kProgressMs : kRetryMs; }
  int tries() const override { return kTries; }

 private:
  void send(Component& from);
  Command command_;
  Outcome outcome_;
  bool in_progress_ = false;  // an IN_PROGRESS came: the final ack is awaited, kProgressMs at most
};

}  // namespace mavswitch::services
