#include "window/http_api.hpp"

#include <fmt/format.h>
#include <openssl/crypto.h>

#include <re2/re2.h>
#include <algorithm>
#include <cctype>
#include <chrono>
#include <cmath>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "config/config_keys.hpp"
#include "fabric/vehicle_map.hpp"
#include "mavswitch/msg/global_position_int.hpp"
#include "window/router_report.hpp"

namespace mavswitch::window {
namespace {

using Json = nlohmann::json;

constexpr std::string_view kEndpoints = "/api/v1/endpoints";

int64_t unix_now_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

}  // namespace

HttpResponse json_message(int status, const std::string& message) {
  return {status, "application/json", json_text(Json{{status < 300 ? "result" : "error", message}}) + "\n"};
}

std::optional<std::string> query_value(std::string_view query, std::string_view name) {
  for (size_t at = 0; at <= query.size();) {
    const size_t end = std::min(query.find('&', at), query.size());
    const std::string_view item = query.substr(at, end - at);
    at = end + 1;
    if (!item.starts_with(name) || (item.size() > name.size() && item[name.size()] != '=')) continue;
    const std::string_view raw = item.size() > name.size() ? item.substr(name.size() + 1) : std::string_view();
    std::string value;
    for (size_t i = 0; i < raw.size(); ++i) {
      const auto hex = [](char c) { return std::isxdigit(static_cast<unsigned char>(c)) != 0; };
      if (raw[i] == '%' && i + 2 < raw.size() && hex(raw[i + 1]) && hex(raw[i + 2])) {
        value += static_cast<char>(std::stoi(std::string(raw.substr(i + 1, 2)), nullptr, 16));
        i += 2;
      } else {
        value += raw[i] == '+' ? ' ' : raw[i];
      }
    }
    return value;
  }
  return std::nullopt;
}

std::optional<config::ConfigSection> section_of(const std::string& body, std::string* error) {
  // A duplicate key is refused, not taken silently (which of the two was meant?).
  std::set<std::string> seen;
  std::string duplicate;
  const auto note_keys = [&](int depth, Json::parse_event_t event, Json& parsed) {
    if (event == Json::parse_event_t::key && depth == 1 && !seen.insert(parsed.get<std::string>()).second)
      duplicate = parsed.get<std::string>();
    return true;
  };
  const Json j = Json::parse(body, note_keys, false);
  if (j.is_discarded() || !j.is_object()) {
    *error = "the body is neither a config section nor a JSON object";
    return std::nullopt;
  }
  if (!duplicate.empty()) {
    *error = config::keys::quoted(duplicate) + ": given twice";
    return std::nullopt;
  }
  config::ConfigSection section;
  for (const auto& [key, value] : j.items()) {
    std::string v;
    if (value.is_string())
      v = value.get<std::string>();
    else if (value.is_number() || value.is_boolean())
      v = value.dump();
    else {
      *error = config::keys::quoted(key) + ": a value is a string, a number or a boolean";
      return std::nullopt;
    }
    if (key == "section")
      section.type = v;
    else if (key == "name")
      section.name = v;
    else
      section.keys.emplace_back(key, std::move(v));
  }
  if (section.type.empty() || section.name.empty()) {
    *error = "give \"section\" (UdpEndpoint, TcpEndpoint, TcpServerEndpoint, UartEndpoint) and \"name\"";
    return std::nullopt;
  }
  return section;
}

bool is_json(const std::string& body) {
  const size_t first = body.find_first_not_of(" \t\r\n");
  return first != std::string::npos && body[first] == '{';
}

bool HttpApi::token_matches(const HttpRequest& request) const {
  const std::string expected = "Bearer " + options_.token;
  return !options_.token.empty() && request.authorization.size() == expected.size() &&
         CRYPTO_memcmp(request.authorization.data(), expected.data(), expected.size()) == 0;
}

std::map<uint16_t, VehicleWatch::Heartbeat> HttpApi::heartbeats() {
  std::map<uint16_t, VehicleWatch::Heartbeat> got;
  if (options_.vehicles != nullptr) router_.run_on_loop([&] { got = options_.vehicles->heartbeats(); });
  return got;
}

int HttpApi::admits_websocket(const HttpRequest& request) const {
  if (!options_.token.empty()) {
    if (token_matches(request)) return 0;
    // A token in a URL ends up in logs and browser history: only an upgrade, which a browser
    // cannot give an Authorization header, may carry one there.
    if (!request.upgrade) return 401;
    constexpr std::string_view kParam = "token=";
    for (size_t at = 0; at < request.query.size();) {
      const size_t end = std::min(request.query.find('&', at), request.query.size());
      const std::string_view item = std::string_view(request.query).substr(at, end - at);
      if (item.starts_with(kParam) && item.size() - kParam.size() == options_.token.size() &&
          CRYPTO_memcmp(item.data() + kParam.size(), options_.token.data(), options_.token.size()) == 0)
        return 0;
      at = end + 1;
    }
    return 401;
  }
  if (!options_.loopback_listener) return 403;
  const bool same_origin = request.origin.empty() || request.origin == "http://" + request.host ||
                           request.origin == "https://" + request.host;
  return same_origin ? 0 : 403;
}

HttpResponse HttpApi::handle(const HttpRequest& request) {
  const bool reads = request.method == "GET" || request.method == "HEAD";
  // The page's files hold no state: they load without the token, and the page asks for it.
  const bool page = request.path == "/" ||
                    (request.path.find('/', 1) == std::string::npos && request.path.find('.') != std::string::npos);
  if (reads && !page && options_.token_for_reads && !token_matches(request))
    return json_message(401, "this server listens beyond loopback: every request needs the bearer token");
  if (auto answer = vehicle_data(request)) return std::move(*answer);
  if (!reads) return change(request);
  const std::string& path = request.path;
  if (path == "/metrics") {
    return {200, "text/plain; version=0.0.4; charset=utf-8",
            metrics_text(take_snapshot(router_), options_.metrics_per_link) +
                (options_.more_metrics ? options_.more_metrics() : "")};
  }
  if (path == "/api/v1/links") return {200, "application/json", links_json(take_snapshot(router_)) + "\n"};
  if (path == "/api/v1/stats") return {200, "application/json", stats_json(take_snapshot(router_)) + "\n"};
  if (path == kEndpoints) return {200, "application/json", endpoints_json(router_) + "\n"};
  if (path == "/api/v1/systems")
    return {200, "application/json", systems_json(router_, heartbeats(), options_.own_components) + "\n"};
  if (path == "/api/v1/statustext") return {200, "application/json", status_text_json() + "\n"};
  if (path == "/api/v1/history")
    return {200, "application/json", history_.json(fabric::fleet_names(), unix_now_ms()) + "\n"};
  if (path == "/api/v1/rates") {
    std::vector<rates::MessageRates::Rate> list;
    if (options_.rates != nullptr) router_.run_on_loop([&] { list = options_.rates->rates(); });
    return {200, "application/json", rates_json(router_, list, options_.rates != nullptr) + "\n"};
  }
  if (path == "/api/v1/events") {
    HttpResponse events(200, "text/event-stream");
    events.next_event = [this] { return live_state(); };
    return events;
  }
  if (path == "/" || path.find('/', 1) == std::string::npos) return page_file(path == "/" ? "/index.html" : path);
  if (path == "/api/v1" || path == "/api/v1/") {
    return {200, "application/json",
            json_text(Json{{"links", "/api/v1/links"},
                           {"endpoints", kEndpoints},
                           {"systems", "/api/v1/systems"},
                           {"rates", "/api/v1/rates"},
                           {"statustext", "/api/v1/statustext"},
                           {"history", "/api/v1/history"},
                           {"stats", "/api/v1/stats"},
                           {"metrics", "/metrics"},
                           // For the page: the tiles under its plan view ([Http] MapTiles), or none.
                           {"map_tiles", options_.map_tiles.empty() ? Json() : Json(options_.map_tiles)}},
                      2) +
                "\n"};
  }
  return json_message(404, "no such resource: " + path);
}

// The page's own files, by a plain name (no path can climb out of the directory).
HttpResponse HttpApi::page_file(const std::string& path) const {
  static const RE2 name(R"(/[a-z0-9-]+\.(html|js|css|svg))");
  std::string extension;
  if (!RE2::FullMatch(path, name, &extension)) return json_message(404, "no such resource: " + path);
  if (options_.page_dir.empty()) return json_message(404, "the status page's files are not installed");
  std::ifstream in(options_.page_dir + path, std::ios::binary);
  if (!in) return json_message(404, "no such resource: " + path);
  std::ostringstream text;
  text << in.rdbuf();
  static const std::map<std::string, std::string> types = {{"html", "text/html; charset=utf-8"},
                                                           {"js", "text/javascript; charset=utf-8"},
                                                           {"css", "text/css; charset=utf-8"},
                                                           {"svg", "image/svg+xml"}};
  return {200, types.at(extension), text.str()};
}

// Each system's last STATUSTEXT lines, oldest first: what a page opened now shows before going live.
std::string HttpApi::status_text_json() {
  static constexpr const char* kSeverities[] = {"EMERGENCY", "ALERT",  "CRITICAL", "ERROR",
                                                "WARNING",   "NOTICE", "INFO",     "DEBUG"};
  std::vector<std::pair<uint8_t, std::deque<StatusTextHistory::Line>>> all;
  if (options_.vehicles != nullptr) router_.run_on_loop([&] { all = options_.vehicles->status_texts(); });
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

void HttpApi::tick() {
  const int64_t now = unix_now_ms();
  const RouterSnapshot s = take_snapshot(router_);
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
  if (options_.data == nullptr) return;
  const vehicle::WallTimes clock = vehicle::WallTimes::now();
  for (const NewestFrames::Slot& slot : options_.data->newest(msg::GlobalPositionInt::kId)) {
    if (slot.component != 1) continue;  // the autopilot's
    const auto p = msg::GlobalPositionInt::decode({slot.payload.data(), slot.payload_len});
    const auto at =
        std::chrono::duration_cast<std::chrono::milliseconds>(clock.of(slot.last).time_since_epoch()).count();
    history_.position(slot.system, {at, p.lat, p.lon, p.relative_alt});
  }
}

std::string HttpApi::live_state() {
  const RouterSnapshot s = take_snapshot(router_);
  // Endpoints with no link up (a UDP server no peer has sent to yet): listed all the same.
  Json waiting = Json::array();
  for (const auto& e : s.endpoints) {
    if (e.links.empty()) waiting.push_back({{"endpoint", e.name}, {"kind", e.kind}, {"description", e.description}});
  }
  return "{\"links\":" + links_json(s, false) + ",\"waiting\":" + json_text(waiting) +
         ",\"systems\":" + systems_json(router_, heartbeats(), options_.own_components, false) +
         ",\"routed\":" + std::to_string(s.routing.frames) + "}";
}

HttpResponse HttpApi::change(const HttpRequest& request) {
  if (request.method != "POST" && request.method != "DELETE")
    return json_message(405, request.method + " is not used here");
  if (options_.token.empty())
    return json_message(403, "changes over HTTP need a bearer token: set TokenFile in [Http]");
  if (!token_matches(request)) return json_message(401, "a change needs the bearer token (Authorization: Bearer ...)");
  const std::string& path = request.path;
  // Each change waits for the router: worked out on the blocking-work thread (later), whose
  // answer the window writes when it comes.
  auto later = [](std::function<EndpointControl::Result()> change) {
    HttpResponse r;
    r.later = [change = std::move(change)] {
      const EndpointControl::Result done = change();
      return json_message(done.status, done.message);
    };
    return r;
  };
  if (request.method == "POST" && path == kEndpoints) {
    if (!is_json(request.body)) return later([this, text = request.body] { return control_.add(text); });
    std::string error;
    auto section = section_of(request.body, &error);
    if (!section) return json_message(400, error);
    return later([this, section = std::move(*section)] { return control_.add(section); });
  }
  if (request.method == "DELETE" && path.size() > kEndpoints.size() + 1 && path.starts_with(kEndpoints) &&
      path[kEndpoints.size()] == '/')
    return later([this, name = path.substr(kEndpoints.size() + 1)] { return control_.remove(name); });
  if (request.method == "POST" && path == "/api/v1/reload") return later([this] { return control_.reload(); });
  return json_message(404, "no such resource: " + request.method + " " + path);
}

}  // namespace mavswitch::window
