#include "rest/message_tree.hpp"

#include <fmt/format.h>
#include <time.h>

#include <algorithm>
#include <cstring>
#include <iterator>

namespace mavswitch::rest {
namespace {

constexpr auto kWindow = std::chrono::seconds(2);  // a rate over the last two seconds or so

uint64_t key_of(uint8_t system, uint8_t component, uint32_t msgid) {
  return uint64_t(system) << 40 | uint64_t(component) << 32 | msgid;
}

float frequency_at(const MessageTree::Slot& s, WallClock::time_point now) {
  // A finished window's rate, unless the current one has gone on longer (a stream that slowed or
  // stopped reads lower, down to zero, rather than its old rate for ever).
  const double elapsed = std::chrono::duration<double>(now - s.window_start).count();
  if (elapsed >= std::chrono::duration<double>(kWindow).count() || s.frequency == 0)
    return elapsed > 0.5 ? float(s.window_frames / elapsed) : s.frequency;
  return s.frequency;
}

}  // namespace

void MessageTree::add(const protocol::FrameView& frame, WallClock::time_point now) {
  const uint64_t key = key_of(frame.sysid(), frame.compid(), frame.msgid());
  auto it = index_.find(key);
  if (it == index_.end()) {
    if (slots_.size() == kMaxSlots) {
      ++refused_;
      return;
    }
    it = index_.emplace(key, uint32_t(slots_.size())).first;
    Slot& s = slots_.emplace_back();
    s.system = frame.sysid(), s.component = frame.compid(), s.msgid = frame.msgid();
    s.first = s.window_start = now;
    s.window_frames = -1;  // the window counts the frames after the one it starts at
  }
  Slot& s = slots_[it->second];
  const auto payload = frame.payload();
  s.payload_len = static_cast<uint8_t>(payload.size());
  std::memcpy(s.payload.data(), payload.data(), payload.size());
  s.sequence = frame.seq();
  ++s.counter;
  s.last = now;
  ++s.window_frames;
  if (now - s.window_start >= kWindow) {
    s.frequency = float(s.window_frames / std::chrono::duration<double>(now - s.window_start).count());
    s.window_start = now;
    s.window_frames = 0;
  }
}

std::string iso_time(WallClock::time_point t) {
  const auto since = t.time_since_epoch();
  const auto seconds = static_cast<time_t>(std::chrono::duration_cast<std::chrono::seconds>(since).count());
  const long nanos = long(std::chrono::duration_cast<std::chrono::nanoseconds>(since).count() % 1'000'000'000);
  tm local{};
  localtime_r(&seconds, &local);
  const long offset = local.tm_gmtoff / 60;
  return fmt::format("{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:09}{}{:02}:{:02}", local.tm_year + 1900, local.tm_mon + 1,
                     local.tm_mday, local.tm_hour, local.tm_min, local.tm_sec, nanos, offset < 0 ? '-' : '+',
                     std::abs(offset) / 60, std::abs(offset) % 60);
}

std::string MessageTree::render(const std::vector<Slot>& slots, const MessageJson& json, WallClock::time_point now) {
  std::vector<std::pair<const Slot*, const dialect::MessageDef*>> known;
  known.reserve(slots.size());
  for (const Slot& s : slots)
    if (const auto* def = json.dialect().find(s.msgid)) known.emplace_back(&s, def);
  std::sort(known.begin(), known.end(), [](const auto& a, const auto& b) {
    return std::tie(a.first->system, a.first->component, a.second->name) <
           std::tie(b.first->system, b.first->component, b.second->name);
  });
  std::string out = "{\"vehicles\":{";
  int system = -1, component = -1;
  for (const auto& [s, def] : known) {
    if (s->system != system) {
      if (system >= 0) out += "}}}},";
      system = s->system, component = -1;
      fmt::format_to(std::back_inserter(out), R"("{}":{{"id":{},"components":{{)", system, system);
    }
    if (s->component != component) {
      if (component >= 0) out += "}},";
      component = s->component;
      fmt::format_to(std::back_inserter(out), R"("{}":{{"id":{},"messages":{{)", component, component);
    } else {
      out += ',';
    }
    out += '"';
    out += def->name;
    out += "\":{\"message\":";
    json.write_message(s->msgid, {s->payload.data(), s->payload_len}, out);
    fmt::format_to(std::back_inserter(out),
                   R"(,"status":{{"time":{{"counter":{},"first_update":"{}","last_update":"{}","frequency":{}}}}}}})",
                   s->counter, iso_time(s->first), iso_time(s->last), frequency_at(*s, now));
  }
  if (system >= 0) out += "}}}}";
  return out + "}}";
}

}  // namespace mavswitch::rest
