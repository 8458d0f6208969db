#include "vehicle/message_tree.hpp"

#include <fmt/format.h>
#include <time.h>

#include <algorithm>
#include <cstring>
#include <iterator>

namespace mavswitch::vehicle {

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

std::string render_tree(const std::vector<NewestFrames::Slot>& slots, const MessageJson& json, const WallTimes& at) {
  std::vector<std::pair<const NewestFrames::Slot*, const dialect::MessageDef*>> known;
  known.reserve(slots.size());
  for (const NewestFrames::Slot& s : slots)
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
                   s->counter, iso_time(at.of(s->first)), iso_time(at.of(s->last)), s->frequency_at(at.loop_now));
  }
  if (system >= 0) out += "}}}}";
  return out + "}}";
}

}  // namespace mavswitch::vehicle
