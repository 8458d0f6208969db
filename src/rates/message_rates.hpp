// Each link gets the message rates it asks for. A component (an autopilot) has one rate per
// message, but the programs around it want different ones; routers pass SET_MESSAGE_INTERVAL
// on, so the last to ask wins for everyone. Here the router keeps each link's wish per
// (component, message) instead: an interval, the component's default, or off. It asks the
// component once, with a command of its own, for the fastest wish (its default when none is
// left, off when every wish is off); it answers each asker's command with the component's own
// COMMAND_ACK (result and result_param2), written to the asker's link in the component's name;
// and each link is thinned to its own wish, the newest frame passing (transport::Link::wish).
// A link's wishes go with it, and the component is asked again at once; a component that
// rebooted (its SYSTEM_TIME went back) is asked again for every wish.
//
// Requests come from the router (Router::take_rate_requests): MAV_CMD_SET_MESSAGE_INTERVAL in
// a COMMAND_LONG or COMMAND_INT, and ArduPilot's REQUEST_DATA_STREAM (a wish for each message
// of the group: stream_groups.hpp; it has no answer). Everything here runs on the router's
// thread. One command to a component at a time: COMMAND_ACK does not say which message it
// answers. The commands run as transactions on the component's engine (library/transactions.hpp):
// it sends again after a silence and believes only the component's own link.
//
// GET_MESSAGE_INTERVAL passes to the component; its MESSAGE_INTERVAL reaches every link, each
// told its own wish (transport::StreamWishes::tell_own), so each hears the rate it gets.
//
// Fair shares: each link may hold wishes for at most kMaxWishesPerLink streams; "off" thins only
// the link that asked (the component is never asked to stop a stream other links may want: it
// is asked for its default instead), and so does a wish slower than the component's default
// (asked once per stream, before the first wish, with GET_MESSAGE_INTERVAL); no interval asked
// is shorter than MaxStreamRate allows; commands to one component go at most one per kPaceMs,
// each for the newest wishes (requests in between coalesce); the record of an ask goes once its
// stream has no wish and the component took the default again.
//
// Chose not to build: a link asking "default" is not thinned to it, a component that does not
// answer GET_MESSAGE_INTERVAL has its slow wishes asked as they are, and a MESSAGE_INTERVAL
// signed on its way is passed as it is.
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <vector>

#include "library/command_exchange.hpp"
#include "library/component.hpp"
#include "router/router.hpp"

namespace mavswitch::rates {

class MessageRates {
 public:
  static constexpr int64_t kDefault = 0;  // the component's own rate
  static constexpr int64_t kOff = -1;
  static constexpr size_t kMaxStreams = 1024;       // (component, message) pairs with wishes
  static constexpr size_t kMaxWishesPerLink = 128;  // so that no one link takes kMaxStreams
  static constexpr routing::Millis kPaceMs = 20;    // between two commands to one component
  static constexpr double kDefaultMaxRateHz = 100;  // MaxStreamRate

  // Takes the router's rate requests; asks with `component` (the router's own, which must
  // outlive this). After start(), before run(). `max_rate_hz` (MaxStreamRate; 0: none): no
  // wish asks the component for more than this, whatever a peer sends.
  MessageRates(Router& router, mavswitch::Component& component, double max_rate_hz = kDefaultMaxRateHz);
  ~MessageRates();
  MessageRates(const MessageRates&) = delete;
  MessageRates& operator=(const MessageRates&) = delete;

  // What a component was asked for one message, and each link's wish. Router thread.
  struct Rate {
    uint8_t system, component;
    uint32_t message;
    int64_t asked_us;                                     // kDefault, kOff, or microseconds
    bool answered;                                        // the component acknowledged it
    uint8_t result;                                       // its MAV_RESULT then
    std::vector<std::pair<std::string, int64_t>> wishes;  // by link name
  };
  std::vector<Rate> rates() const;

 private:
  struct Key {
    uint8_t system, component;
    uint32_t message;
    auto operator<=>(const Key&) const = default;
  };
  struct Asker {  // a command to answer
    routing::LinkId link;
    uint8_t system, component;
    bool operator==(const Asker&) const = default;
  };
  struct Ask {
    int64_t interval = kDefault;  // what the component was (or is being) asked
    bool answered = false;
    uint8_t result = 0;
    int32_t result_param2 = 0;
    std::vector<Asker> waiting;
    bool probed = false;     // its default was asked (GET_MESSAGE_INTERVAL), answered or not
    int64_t default_us = 0;  // what it said: its default interval (> 0), -1 off; 0: not known
  };
  struct Target {                // a component asked: one command at a time: a COMMAND_ACK does not name its message
    std::deque<uint32_t> queue;  // messages to ask about, in turn
    bool in_flight = false;      // a transaction runs, or waits for its turn (pacing)
    int64_t sent = 0;            // the interval the command in flight asks for
    transport::EventLoop::TimerId timer = 0;  // the wait for its turn
    uint32_t last_boot_ms = 0;
    routing::Millis last_sent = INT64_MIN / 2;  // commands to it are paced (kPaceMs)
  };

  void request(routing::LinkId link, const protocol::FrameView& frame);
  void wish(routing::LinkId link, const Key& key, int64_t interval, const Asker* asker);
  void gone(routing::LinkId link);
  void settle(const Key& key, const Asker* asker);  // asks again where the fastest wish changed
  void queue(const Key& key);
  void send_next(uint16_t target);
  void later(uint16_t target, routing::Millis wait);  // send_now, after `wait`
  void set_ended(uint16_t target, Transactions::End end, const CommandExchange::Outcome& outcome);
  void answer(const Key& key, const Asker& asker);
  void reply(const Key& key, const Asker& asker, uint8_t result, int32_t result_param2);
  int64_t fastest(const Key& key) const;
  static uint16_t component_key(uint8_t system, uint8_t component) { return uint16_t(system << 8 | component); }

  Router& router_;
  mavswitch::Component& component_;
  std::vector<Subscription> subscriptions_;
  void forget_if_settled(const Key& key);  // the record of an ask goes once no wish is left
  void send_now(uint16_t target);

  std::map<Key, std::map<routing::LinkId, int64_t>> wishes_;
  std::map<routing::LinkId, size_t> wishes_of_;  // streams each link has a wish for
  const int64_t min_interval_us_;                // from MaxStreamRate; 0: none
  log::Throttle unanswered_lines_;
  std::map<Key, Ask> asks_;
  std::map<uint16_t, Target> targets_;
  uint8_t answer_seq_ = 0;
  bool full_said_ = false;
};

}  // namespace mavswitch::rates
