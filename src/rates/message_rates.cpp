#include "rates/message_rates.hpp"

#include <cmath>
#include <cstring>

#include "base/log.hpp"
#include "library/command_exchange.hpp"
#include "mavswitch/msg/command_ack.hpp"
#include "mavswitch/msg/system_time.hpp"
#include "rates/interval_probe.hpp"
#include "rates/stream_groups.hpp"

namespace mavswitch::rates {
namespace {

constexpr uint16_t kSetMessageInterval = 511;
constexpr uint32_t kRequestDataStream = 66, kCommandInt = 75, kCommandLong = 76;
constexpr uint8_t kResultDenied = 2;
constexpr int kTries = 3;                  // as a ground station would send a command (a second apart)
constexpr int64_t kBusyMs = 1000;          // the same command to the component from elsewhere: asked again after
constexpr uint32_t kRebootBackMs = 10000;  // SYSTEM_TIME this far back: the component rebooted

float f32(const protocol::FrameView& f, int offset) {
  uint8_t b[4];
  for (int i = 0; i < 4; ++i) b[i] = f.payload_byte(offset + i);
  float v;
  std::memcpy(&v, b, 4);
  return v;
}

// Whether routing knows where a command to (system, component) goes: the component heard, or,
// for component 0, any component of the system.
bool reachable(const routing::RouteTable& routes, uint8_t system, uint8_t component) {
  if (component != 0) return routes.knows(system, component);
  bool any = false;
  routes.for_each_system_link(system, [&](routing::LinkId) { any = true; });
  return any;
}

// What the router hands here instead of routing (Router::RateRequests; asked only of ids 66 to
// 76): MAV_CMD_SET_MESSAGE_INTERVAL (511) in a COMMAND_LONG or COMMAND_INT, or
// REQUEST_DATA_STREAM, to a named system. Both commands keep the command id at payload byte 28
// and the target system at 30.
bool is_rate_request(const protocol::FrameView& f) noexcept {
  const uint32_t id = f.msgid();
  if (id == kRequestDataStream) return f.payload_byte(2) != 0;
  if (id != kCommandLong && id != kCommandInt) return false;
  return f.payload_byte(28) == (kSetMessageInterval & 0xFF) && f.payload_byte(29) == (kSetMessageInterval >> 8) &&
         f.payload_byte(30) != 0;
}

}  // namespace

MessageRates::MessageRates(Router& router, mavswitch::Component& component, double max_rate_hz)
    : router_(router),
      component_(component),
      min_interval_us_(max_rate_hz > 0 ? static_cast<int64_t>(std::llround(1e6 / max_rate_hz)) : 0) {
  router_.take_rate_requests({.first_id = kRequestDataStream,
                              .last_id = kCommandLong,
                              .is = &is_rate_request,
                              .take = [this](routing::LinkId link, const protocol::FrameView& f) { request(link, f); },
                              .gone = [this](routing::LinkId link) { gone(link); }});
  subscriptions_.push_back(component_.subscribe<msg::SystemTime>(
      [this](const msg::SystemTime& t, const protocol::FrameView& f) {
        const auto it = targets_.find(component_key(f.sysid(), f.compid()));
        if (it == targets_.end()) return;
        const uint32_t last = it->second.last_boot_ms;
        it->second.last_boot_ms = t.time_boot_ms;
        if (t.time_boot_ms + kRebootBackMs >= last) return;
        log::info("message rates: {}/{} rebooted: asking it again for every wish", f.sysid(), f.compid());
        for (auto& [key, ask] : asks_) {
          if (key.system != f.sysid() || key.component != f.compid()) continue;
          ask.answered = false;
          queue(key);
        }
      },
      {.from_home = true}));
}

MessageRates::~MessageRates() {
  router_.run_on_loop([&] {
    component_.transactions().cancel(this);  // the component outlives this
    for (auto& [key, t] : targets_) {
      if (t.timer != 0) router_.event_loop().cancel(t.timer);
    }
  });
}

void MessageRates::request(routing::LinkId link, const protocol::FrameView& f) {
  MAVSWITCH_ASSERT_OWNER(router_.event_loop(), "MessageRates::request");
  if (f.msgid() == kRequestDataStream) {  // rate (Hz, 2 bytes), target system, component, stream, start
    const auto hz = static_cast<uint16_t>(f.payload_byte(0) | f.payload_byte(1) << 8);
    const bool start = f.payload_byte(5) != 0;
    const int64_t interval = start && hz > 0 ? 1'000'000 / hz : kOff;
    if (!reachable(router_.routing().routes(), f.payload_byte(2), f.payload_byte(3))) return;
    for (const uint32_t message : stream_group(f.payload_byte(4)))
      wish(link, {f.payload_byte(2), f.payload_byte(3), message}, interval, nullptr);
    return;
  }
  // COMMAND_LONG and COMMAND_INT: param1 the message, param2 the interval (µs; 0 default, -1 off).
  const float message = f32(f, 0), interval = f32(f, 4);
  const Asker asker{link, f.sysid(), f.compid()};
  const Key key{f.payload_byte(30), f.payload_byte(31), static_cast<uint32_t>(std::max(0.0f, message))};
  // A component the router never heard gets nothing, as routing would give it: no record is
  // made of a wish for a made-up component.
  if (!reachable(router_.routing().routes(), key.system, key.component)) return;
  const int64_t wished = interval < 0 ? kOff : static_cast<int64_t>(std::llround(interval));
  wish(link, key, wished, &asker);
}

void MessageRates::wish(routing::LinkId link, const Key& key, int64_t interval, const Asker* asker) {
  // Bounded against a peer inventing components and messages: past kMaxWishesPerLink streams of
  // its own, or kMaxStreams in all, a new wish is refused (DENIED to a command), said once.
  const auto streams = wishes_.find(key);
  const bool known = streams != wishes_.end() && streams->second.contains(link);
  if (!known &&
      (wishes_of_[link] >= kMaxWishesPerLink || (streams == wishes_.end() && wishes_.size() >= kMaxStreams))) {
    if (!full_said_) {
      log::warning("message rates: {} refused a wish: a link may wish for {} streams, all links for {}",
                   router_.link_name(link), kMaxWishesPerLink, kMaxStreams);
      full_said_ = true;
    }
    if (asker != nullptr) reply(key, *asker, kResultDenied, 0);
    return;
  }
  if (interval > 0 && interval < min_interval_us_) interval = min_interval_us_;  // MaxStreamRate
  if (!known) ++wishes_of_[link];
  wishes_[key][link] = interval;
  router_.wish(link, key.system, key.component, key.message,
               interval == kOff ? transport::StreamWishes::kOff : interval);
  settle(key, asker);
}

void MessageRates::gone(routing::LinkId link) {
  MAVSWITCH_ASSERT_OWNER(router_.event_loop(), "MessageRates::gone");
  for (auto it = wishes_.begin(); it != wishes_.end();) {
    const Key key = it->first;
    const bool had = it->second.erase(link) > 0;
    if (it->second.empty())
      it = wishes_.erase(it);
    else
      ++it;
    if (had) settle(key, nullptr);
  }
  wishes_of_.erase(link);
  for (auto& [key, ask] : asks_) std::erase_if(ask.waiting, [&](const Asker& a) { return a.link == link; });
}

void MessageRates::forget_if_settled(const Key& key) {
  const auto it = asks_.find(key);
  if (it == asks_.end() || wishes_.contains(key) || it->second.interval != kDefault || !it->second.answered ||
      !it->second.waiting.empty())
    return;
  asks_.erase(it);
  const uint16_t id = component_key(key.system, key.component);
  const auto t = targets_.find(id);
  const bool asked_more = std::any_of(asks_.begin(), asks_.end(), [&](const auto& a) {
    return a.first.system == key.system && a.first.component == key.component;
  });
  if (t != targets_.end() && !asked_more && !t->second.in_flight && t->second.queue.empty() && t->second.timer == 0)
    targets_.erase(t);
}

int64_t MessageRates::fastest(const Key& key) const {
  const auto it = wishes_.find(key);
  if (it == wishes_.end()) return kDefault;
  int64_t fastest = INT64_MAX;
  bool any_default = false;
  for (const auto& [link, interval] : it->second) {
    if (interval > 0) fastest = std::min(fastest, interval);
    any_default = any_default || interval == kDefault;
  }
  (void)any_default;
  // Every wish off: the component keeps its default, for the links that asked nothing (each
  // link that asked "off" is thinned to nothing on its own).
  return fastest != INT64_MAX ? fastest : kDefault;
}

void MessageRates::settle(const Key& key, const Asker* asker) {
  const int64_t wanted = fastest(key);
  auto [it, added] = asks_.try_emplace(key);
  Ask& ask = it->second;
  if (!added && ask.interval == wanted && ask.answered) {
    if (asker != nullptr) answer(key, *asker);  // asked already, as this wants: its answer stands
    return;
  }
  if (asker != nullptr && std::find(ask.waiting.begin(), ask.waiting.end(), *asker) == ask.waiting.end())
    ask.waiting.push_back(*asker);
  if (!added && ask.interval == wanted) return;  // being asked already
  ask.interval = wanted;
  ask.answered = false;
  queue(key);
}

void MessageRates::queue(const Key& key) {
  const uint16_t id = component_key(key.system, key.component);
  Target& t = targets_[id];
  if (std::find(t.queue.begin(), t.queue.end(), key.message) == t.queue.end()) t.queue.push_back(key.message);
  if (!t.in_flight) send_next(id);
}

void MessageRates::send_next(uint16_t id) {
  Target& t = targets_[id];
  if (t.timer != 0) router_.event_loop().cancel(t.timer);
  t.timer = 0;
  t.in_flight = !t.queue.empty();
  if (!t.in_flight) return;
  // Paced: a flood of requests costs the component one command per kPaceMs; the wishes that
  // came meanwhile are asked together, as they stand when it goes.
  later(id, t.last_sent + kPaceMs - router_.event_loop().now());
}

void MessageRates::later(uint16_t id, routing::Millis wait) {
  if (wait <= 0) return send_now(id);
  targets_[id].timer = router_.event_loop().after(wait, [this, id] {
    targets_[id].timer = 0;
    send_now(id);
  });
}

// One transaction on the component's engine: it sends again, and takes the answer only from
// the component's own link.
void MessageRates::send_now(uint16_t id) {
  Target& t = targets_[id];
  if (t.queue.empty()) {
    t.in_flight = false;
    return;
  }
  t.last_sent = router_.event_loop().now();
  const Key key{uint8_t(id >> 8), uint8_t(id & 0xFF), t.queue.front()};
  const Ask& ask = asks_[key];
  using End = Transactions::End;
  // First its default, once (GET_MESSAGE_INTERVAL, answered by MESSAGE_INTERVAL): a wish slower
  // than the default is not asked of it, so links that asked nothing keep the default.
  if (!ask.probed) {
    component_.transactions().run<IntervalProbe>(
        this, key.system, key.component, CommandExchange::kind(IntervalProbe::kGetMessageInterval),
        std::make_unique<IntervalProbe>(key.system, key.component, key.message, kTries),
        [this, id, key](End end, const IntervalProbe& probe) {
          if (end == End::kBusy || end == End::kFull) return later(id, kBusyMs);
          Ask& probed = asks_[key];
          probed.probed = true;  // answered or not: unsaid, wishes are asked as they are
          probed.default_us = probe.interval_us().value_or(0);
          send_next(id);  // now the wishes, paced
        });
    return;
  }
  t.sent = ask.interval;
  const float interval =
      static_cast<float>(ask.default_us > 0 && ask.interval > ask.default_us ? kDefault : ask.interval);
  const CommandExchange::Command set{
      key.system, key.component, kSetMessageInterval, {static_cast<float>(key.message), interval}};
  component_.transactions().run<CommandExchange>(
      this, key.system, key.component, CommandExchange::kind(kSetMessageInterval),
      std::make_unique<CommandExchange>(set, kTries),
      [this, id](End end, const CommandExchange& e) { set_ended(id, end, e.outcome()); });
}

void MessageRates::set_ended(uint16_t id, Transactions::End end, const CommandExchange::Outcome& outcome) {
  using End = Transactions::End;
  if (end == End::kBusy || end == End::kFull) return later(id, kBusyMs);
  Target& t = targets_[id];
  const Key key{uint8_t(id >> 8), uint8_t(id & 0xFF), t.queue.front()};
  if (!outcome.acknowledged) {  // no answer: the askers hear nothing
    unanswered_lines_.line(log::Level::kWarning,
                           "message rates: {}/{} did not answer SET_MESSAGE_INTERVAL for message {}", key.system,
                           key.component, key.message);
    t.queue.pop_front();
    if (!wishes_.contains(key)) asks_.erase(key);  // nobody wants it any more: no record
    return send_next(id);
  }
  Ask& ask = asks_[key];
  if (ask.interval != t.sent) return send_next(id);  // the wishes changed meanwhile: ask what they want now
  ask.answered = true;
  ask.result = outcome.result;
  ask.result_param2 = outcome.result_param2;
  for (const Asker& a : ask.waiting) answer(key, a);
  ask.waiting.clear();
  t.queue.pop_front();
  send_next(id);
  forget_if_settled(key);
}

// The component's answer, to the asker alone, in the component's name.
void MessageRates::answer(const Key& key, const Asker& asker) {
  const Ask& ask = asks_[key];
  reply(key, asker, ask.result, ask.result_param2);
}

void MessageRates::reply(const Key& key, const Asker& asker, uint8_t result, int32_t result_param2) {
  msg::CommandAck ack;
  ack.command = kSetMessageInterval;
  ack.result = result;
  ack.result_param2 = result_param2;
  ack.target_system = asker.system;
  ack.target_component = asker.component;
  uint8_t frame[protocol::kMaxFrameLen];
  const size_t n =
      dialect::typed::encode_frame(ack, {.seq = answer_seq_++, .sysid = key.system, .compid = key.component}, frame);
  router_.send_to(asker.link, {frame, n});
}

std::vector<MessageRates::Rate> MessageRates::rates() const {
  MAVSWITCH_ASSERT_OWNER(router_.event_loop(), "MessageRates::rates");
  std::vector<Rate> out;
  for (const auto& [key, ask] : asks_) {
    Rate r{key.system, key.component, key.message, ask.interval, ask.answered, ask.result, {}};
    if (const auto w = wishes_.find(key); w != wishes_.end()) {
      for (const auto& [link, interval] : w->second) r.wishes.emplace_back(router_.link_name(link), interval);
    }
    out.push_back(std::move(r));
  }
  return out;
}

}  // namespace mavswitch::rates
