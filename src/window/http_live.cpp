// What the window shows live: the second's state gathered from the router (the history, the
// event streams' state) and the systems' last STATUSTEXT lines.
#include <nlohmann/json.hpp>

#include "mavswitch/msg/global_position_int.hpp"
#include "window/answer_later.hpp"
#include "window/http_api.hpp"
#include "window/router_report.hpp"

namespace mavswitch::window {

using Json = nlohmann::json;

// Each system's last STATUSTEXT lines, oldest first: what a page opened now shows before going live.
HttpResponse HttpApi::status_texts() {
  using Lines = std::vector<std::pair<uint8_t, std::deque<StatusTextHistory::Line>>>;
  return gathered(
      router_, bell_, [this] { return options_.vehicles != nullptr ? options_.vehicles->status_texts() : Lines{}; },
      [](const Lines& all) {
        return HttpResponse{200, "application/json", status_text_json(all) + "\n"};
      });
}

std::string status_text_json(const std::vector<std::pair<uint8_t, std::deque<StatusTextHistory::Line>>>& all) {
  static constexpr const char* kSeverities[] = {"EMERGENCY", "ALERT",  "CRITICAL", "ERROR",
                                                "WARNING",   "NOTICE", "INFO",     "DEBUG"};
  Json systems = Json::array();
  for (const auto& [system, lines] : all) {
    Json list = Json::array();
    for (const auto& l : lines) {
      list.push_back({{"unix_ms", l.unix_ms},
                      {"component", l.component},
                      {"severity", l.severity},
                      {"severity_name", l.severity < 8 ? kSeverities[l.severity] : "?"},
                      {"text", l.text},
                      {"incomplete", l.incomplete}});
    }
    systems.push_back({{"system", system}, {"lines", std::move(list)}});
  }
  return json_text(Json{{"systems", std::move(systems)}}, 2);
}

// Gathers the second's state on the router's thread; the window keeps its history and the event
// streams' state from it when it comes back.
void HttpApi::tick() {
  struct Second {
    Live live;
    std::vector<NewestFrames::Slot> positions;
  };
  gather<Second>(
      router_, bell_,
      [this] {
        return Second{{snapshot_on_router(router_), heartbeats()},
                      options_.data != nullptr ? options_.data->newest(msg::GlobalPositionInt::kId)
                                               : std::vector<NewestFrames::Slot>{}};
      },
      [this](Second second) {
        keep(second.live.snapshot, second.positions);
        live_ = std::move(second.live);
        live_text_.clear();
      });
}

void HttpApi::keep(const RouterSnapshot& s, const std::vector<NewestFrames::Slot>& positions) {
  const int64_t now = unix_now_ms();
  std::vector<History::LinkTotals> up;
  for (const EndpointSnapshot& e : s.endpoints) {
    for (const LinkSnapshot& l : e.links) {
      uint64_t dropped = 0;
      for (const auto& [cause, n] : drops_of(l.counters)) dropped += n;
      up.push_back(
          {l.name, l.counters.frames_in, l.counters.frames_out, l.sequence_lost + l.counters.fabric_lost, dropped});
    }
  }
  history_.links(up, now);
  const vehicle::WallTimes clock = vehicle::WallTimes::now();
  for (const NewestFrames::Slot& slot : positions) {
    if (slot.component != 1) continue;  // the autopilot's
    const auto p = msg::GlobalPositionInt::decode({slot.payload.data(), slot.payload_len});
    const auto at =
        std::chrono::duration_cast<std::chrono::milliseconds>(clock.of(slot.last).time_since_epoch()).count();
    history_.position(slot.system, {at, p.lat, p.lon, p.relative_alt});
  }
}

std::string HttpApi::live_state() {
  if (!live_text_.empty()) return live_text_;
  const Live empty;  // before the first second came back: nothing yet
  const Live& live = live_ ? *live_ : empty;
  const RouterSnapshot& s = live.snapshot;
  // Endpoints with no link up (a UDP server no peer has sent to yet): listed all the same.
  Json waiting = Json::array();
  for (const auto& e : s.endpoints) {
    if (e.links.empty()) waiting.push_back({{"endpoint", e.name}, {"kind", e.kind}, {"description", e.description}});
  }
  std::string text = "{\"links\":" + links_json(s, false) + ",\"waiting\":" + json_text(waiting) +
                     ",\"systems\":" + systems_json(router_, live.heartbeats, options_.own_components, false) +
                     ",\"routed\":" + std::to_string(s.routing.frames) + ",\"at_ms\":" + std::to_string(s.at_ms) + "}";
  if (live_) live_text_ = text;
  return text;
}

}  // namespace mavswitch::window
