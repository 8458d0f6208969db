// MAVLink's command protocol as an Exchange: a COMMAND_LONG, sent again with `confirmation`
// counted up until its COMMAND_ACK comes (kTries, kRetryMs apart). An IN_PROGRESS ack stops the
// resends and waits for the final one (kProgressMs after the first IN_PROGRESS, however many
// more come). Run it as kind "command:ID": one command of an id to a component at a time, as
// the protocol asks.
#pragma once

#include <array>

#include "library/transactions.hpp"

namespace mavswitch {

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

  // `tries` sends, `retry_ms` apart, before it gives up (the protocol's five, a second apart).
  explicit CommandExchange(const Command& c, int tries = kTries, routing::Millis retry_ms = kRetryMs)
      : command_(c), tries_(tries), retry_ms_(retry_ms) {}
  static std::string kind(uint16_t command) { return "command:" + std::to_string(command); }
  const Outcome& outcome() const noexcept { return outcome_; }
  const Command& command() const noexcept { return command_; }

  // A COMMAND_LONG of `c` with `confirmation` (0 the first time), from `from`.
  static void send(Component& from, const Command& c, uint8_t confirmation);

  std::vector<Listen> listens() const override;
  void start(Component& from) override { send_again(from); }
  Step heard(const protocol::FrameView& frame, Component& from) override;
  bool silent(Component& from) override;
  routing::Millis retry_ms() const override { return in_progress_ ? kProgressMs : retry_ms_; }
  int tries() const override { return tries_; }

 private:
  void send_again(Component& from);
  Command command_;
  int tries_;
  routing::Millis retry_ms_;
  Outcome outcome_;
  bool in_progress_ = false;  // an IN_PROGRESS came: the final ack is awaited, kProgressMs at most
};

}  // namespace mavswitch
