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
#include "window/answer_later.hpp"
#include "window/router_report.hpp"

namespace mavswitch::window {
namespace {

using Json = nlohmann::json;

constexpr std::string_view kEndpoints = "/api/v1/endpoints";

}  // namespace

HttpResponse json_message(int status, const std::string& message) {
  return {status, "application/json", json_text(Json{{status < 300 ? "result" : "error", message}}) + "\n"};
}

std::optional<HttpResponse> method_refused(const HttpRequest& request, std::string_view allowed) {
  for (size_t at = 0; at <= allowed.size();) {
    const size_t end = std::min(allowed.find(", ", at), allowed.size());
    if (allowed.substr(at, end - at) == request.method) return std::nullopt;
    at = end + 2;
  }
  return json_message(405, fmt::format("{} is not used here: {}", request.method, allowed));
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

std::map<uint16_t, VehicleWatch::Heartbeat> HttpApi::heartbeats() const {
  MAVSWITCH_ASSERT_OWNER(router_.event_loop(), "HttpApi::heartbeats");
  return options_.vehicles != nullptr ? options_.vehicles->heartbeats() : std::map<uint16_t, VehicleWatch::Heartbeat>{};
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
  // What the router knows is gathered on its thread and rendered here (answer_later.hpp).
  const auto snapshot = [this] { return snapshot_on_router(router_); };
  if (path == "/metrics") {
    return gathered(
        router_, bell_,
        [this] {
          return std::pair{snapshot_on_router(router_), options_.more_metrics ? options_.more_metrics() : ""};
        },
        [this](const std::pair<RouterSnapshot, std::string>& got) {
          return HttpResponse{200, "text/plain; version=0.0.4; charset=utf-8",
                              metrics_text(got.first, options_.metrics_per_link) + got.second};
        });
  }
  const auto json = [](std::string text) { return HttpResponse{200, "application/json", std::move(text) + "\n"}; };
  if (path == "/api/v1/links")
    return gathered(router_, bell_, snapshot, [json](const RouterSnapshot& s) { return json(links_json(s)); });
  if (path == "/api/v1/stats")
    return gathered(router_, bell_, snapshot, [json](const RouterSnapshot& s) { return json(stats_json(s)); });
  if (path == kEndpoints)
    return gathered(router_, bell_, snapshot, [json](const RouterSnapshot& s) { return json(endpoints_json(s)); });
  if (path == "/api/v1/systems") {
    return gathered(
        router_, bell_, [this] { return heartbeats(); },
        [this, json](const std::map<uint16_t, VehicleWatch::Heartbeat>& beats) {
          return json(systems_json(router_, beats, options_.own_components));
        });
  }
  if (path == "/api/v1/statustext") return status_texts();
  if (path == "/api/v1/history")
    return {200, "application/json", history_.json(fabric::fleet_names(), unix_now_ms()) + "\n"};
  if (path == "/api/v1/rates") {
    return gathered(
        router_, bell_,
        [this] {
          return options_.rates != nullptr ? options_.rates->rates() : std::vector<rates::MessageRates::Rate>{};
        },
        [this, json](const std::vector<rates::MessageRates::Rate>& list) {
          return json(rates_json(router_, list, options_.rates != nullptr));
        });
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

HttpResponse HttpApi::change(const HttpRequest& request) {
  if (request.method != "POST" && request.method != "DELETE")
    return json_message(405, request.method + " is not used here");
  if (options_.token.empty())
    return json_message(403, "changes over HTTP need a bearer token: set TokenFile in [Http]");
  if (!token_matches(request)) return json_message(401, "a change needs the bearer token (Authorization: Bearer ...)");
  const std::string& path = request.path;
  // Each change waits for the router: worked out on the blocking-work thread, whose answer the
  // window writes when it comes.
  auto later = [this](std::function<EndpointControl::Result()> change) {
    return worked_out(options_.run_later, [change = std::move(change)] {
      const EndpointControl::Result done = change();
      return json_message(done.status, done.message);
    });
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
