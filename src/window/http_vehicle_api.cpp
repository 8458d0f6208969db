#include <fmt/format.h>

#include <re2/re2.h>

#include <nlohmann/json.hpp>

#include "window/answer_later.hpp"
#include "window/http_api.hpp"

// mavlink2rest's API on the window (the tree, the helper, /info, the JSON WebSocket) and the
// vehicles' commands and parameters: requests turned into calls of vehicle::VehicleData.
namespace mavswitch::window {
namespace {

using Json = nlohmann::json;

// mavlink2rest's paths (under /v1 and, as its default API version, under /), and mavlink-server's
// where they are the same data.
constexpr std::string_view kTreePaths[] = {"/v1/mavlink", "/mavlink", "/v1/rest/mavlink"};
constexpr std::string_view kHelperPaths[] = {"/v1/helper/mavlink", "/helper/mavlink", "/v1/rest/helper/mavlink"};
constexpr std::string_view kSocketPaths[] = {"/v1/ws/mavlink", "/ws/mavlink", "/v1/rest/ws"};
constexpr std::string_view kVehicles = "/v1/vehicles/";
constexpr size_t kMaxFilter = 256;  // a regex over message names: longer is no longer a filter

// A WebSocket client of the vehicle data: its feed, and whether what it sends goes on.
class JsonSocket final : public TextSocket {
 public:
  JsonSocket(std::shared_ptr<vehicle::JsonFeed> feed, vehicle::VehicleData& data, int refused)
      : feed_(std::move(feed)), data_(data), refused_(refused) {}
  ~JsonSocket() override { feed_->close(); }
  void take(std::vector<Text>& out) override { feed_->take(out); }
  std::string receive(std::string_view text) override {
    if (refused_ != 0)
      return json_text(Json{{"error", refused_ == 401 ? "sending needs the bearer token (?token=)"
                                                      : "this origin or listener may not send to the vehicles"}});
    return data_.send(text).body;
  }
  void close() override { feed_->close(); }

 private:
  const std::shared_ptr<vehicle::JsonFeed> feed_;
  vehicle::VehicleData& data_;
  const int refused_;  // 0: it may send; else why not (as admits_websocket)
};

bool under(std::string_view path, std::string_view root) {
  return path == root || (path.size() > root.size() && path.starts_with(root) && path[root.size()] == '/');
}

}  // namespace

std::optional<HttpResponse> HttpApi::vehicle_data(const HttpRequest& request) {
  const std::string& path = request.path;
  const bool get = request.method == "GET" || request.method == "HEAD";
  if (get && path == "/info") {
    return HttpResponse{200, "application/json",
                        json_text(Json{{"version", 0},
                                       {"service",
                                        {{"name", "mavswitch"},
                                         {"version", options_.program.version},
                                         {"sha", options_.program.sha},
                                         {"build_date", options_.program.build_date},
                                         {"authors", "mavswitch"}}}},
                                  2) +
                            "\n"};
  }
  vehicle::VehicleData* data = options_.data;
  for (const std::string_view root : kTreePaths) {
    if (!under(path, root)) continue;
    if (data == nullptr) return json_message(404, "the vehicle data is off");
    if (get) {
      const auto http = [](vehicle::VehicleData::Answer a) {
        HttpResponse r{a.status, "application/json", a.shared ? "" : std::move(a.body) + "\n"};
        r.shared_body = std::move(a.shared);
        return r;
      };
      const std::string pointer = path.substr(root.size());
      if (auto rendered = data->tree_rendered(pointer, request.room)) return http(std::move(*rendered));
      // The slots copied on the router's thread, rendered here (answer_later.hpp).
      return gathered(
          router_, bell_, [data] { return data->newest(); },
          [data, http, pointer, room = request.room](const std::vector<NewestFrames::Slot>& slots) {
            return http(data->tree(pointer, room, slots));
          });
    }
    if (request.method != "POST" || path != root) return json_message(405, request.method + " is not used here");
    if (const int refused = admits_websocket(request); refused != 0)
      return json_message(refused, refused == 401
                                       ? "sending to a vehicle needs the bearer token (Authorization: Bearer ...)"
                                       : "sending to a vehicle from this origin or listener is refused");
    vehicle::VehicleData::Answer a = data->send(request.body);
    return HttpResponse{a.status, "application/json", std::move(a.body) + "\n"};
  }
  if (path.starts_with(kVehicles)) return vehicle_request(request);
  for (const std::string_view root : kHelperPaths) {
    if (path != root || !get) continue;
    if (data == nullptr) return json_message(404, "the vehicle data is off");
    const auto name = query_value(request.query, "name");
    if (!name) return json_message(400, "give the message's name: ?name=HEARTBEAT");
    std::string helper = data->json().helper(*name);
    if (helper.empty()) return json_message(404, "no message " + *name + " in dialect " + data->json().dialect().name);
    return HttpResponse{200, "application/json", json_text(nlohmann::ordered_json::parse(helper), 2) + "\n"};
  }
  return std::nullopt;
}

// /v1/vehicles/{sys}/{comp}/command (POST), .../parameters (GET), .../parameters/{NAME} (GET, PUT):
// answered when the vehicle answers (or does not).
HttpResponse HttpApi::vehicle_request(const HttpRequest& request) {
  vehicle::VehicleData* data = options_.data;
  if (data == nullptr) return json_message(404, "the vehicle data is off");
  static const RE2 missions(R"(/v1/vehicles/(\d{1,3})/(\d{1,3})/mission(/current)?)");
  int sys = 0, comp = 0;
  std::string current;
  if (RE2::FullMatch(request.path, missions, &sys, &comp, &current) && sys <= 255 && comp <= 255)
    return mission_request(request, static_cast<uint8_t>(sys), static_cast<uint8_t>(comp), !current.empty());
  static const RE2 files(R"(/v1/vehicles/(\d{1,3})/(\d{1,3})/files(?:/(.*))?)");
  std::string file;
  if (RE2::FullMatch(request.path, files, &sys, &comp, &file) && sys <= 255 && comp <= 255)
    return file_request(request, static_cast<uint8_t>(sys), static_cast<uint8_t>(comp), std::move(file));
  static const RE2 logs(R"(/v1/vehicles/(\d{1,3})/(\d{1,3})/logs(?:/(\d{1,5}))?)");
  std::string log_id;
  if (RE2::FullMatch(request.path, logs, &sys, &comp, &log_id) && sys <= 255 && comp <= 255)
    return log_request(request, static_cast<uint8_t>(sys), static_cast<uint8_t>(comp), log_id);
  static const RE2 shape(R"(/v1/vehicles/(\d{1,3})/(\d{1,3})/(command|parameters)(?:/([A-Za-z0-9_]{1,16}))?)");
  std::string kind, parameter;  // parameter: empty when the path names none
  if (!RE2::FullMatch(request.path, shape, &sys, &comp, &kind, &parameter) || sys > 255 || comp > 255 ||
      (kind == "command" && !parameter.empty()))
    return json_message(404, "no such resource: " + request.path +
                                 " (/v1/vehicles/SYS/COMP/command, .../parameters, .../parameters/NAME, .../mission, "
                                 ".../mission/current, .../files/PATH, .../logs, .../logs/ID)");
  const auto system = static_cast<uint8_t>(sys), component = static_cast<uint8_t>(comp);
  const bool command = kind == "command";
  const bool sends = command || request.method == "PUT";
  if (auto refused = method_refused(request, command ? "POST" : "GET, PUT")) return std::move(*refused);
  if (sends) {
    if (const int refused = admits_websocket(request); refused != 0)
      return json_message(refused, refused == 401
                                       ? "commanding a vehicle needs the bearer token (Authorization: Bearer ...)"
                                       : "commanding a vehicle from this origin or listener is refused");
  }
  HttpResponse r;
  const auto respond = [](std::function<void(HttpResponse)> answer) {
    return [answer = std::move(answer)](vehicle::VehicleData::Answer a) {
      answer(HttpResponse{a.status, a.content_type, std::move(a.body) + (a.body.ends_with('\n') ? "" : "\n")});
    };
  };
  if (command) {
    r.awaits = [=, body = request.body](std::function<void(HttpResponse)> answer) {
      data->command(system, component, body, respond(std::move(answer)));
    };
  } else if (parameter.empty() && request.method == "PUT") {  // a parameter file
    if (request.body.find_first_not_of(" \t\r\n") == std::string::npos)
      return json_message(400, "a PUT gives a parameter file: NAME,VALUE lines, or QGroundControl's");
    r.awaits = [=, body = request.body](std::function<void(HttpResponse)> answer) {
      data->load_parameters(system, component, body, respond(std::move(answer)));
    };
  } else if (parameter.empty()) {
    const std::optional<std::string> format = query_value(request.query, "format");
    if (format && *format != "param" && *format != "qgc" && *format != "json")
      return json_message(400, "format: json, param (Mission Planner) or qgc (QGroundControl)");
    r.awaits = [=](std::function<void(HttpResponse)> answer) {
      if (format && *format != "json")
        data->parameter_file(system, component, *format == "qgc", respond(std::move(answer)));
      else
        data->parameters(system, component, respond(std::move(answer)));
    };
  } else {
    const std::string body = request.method == "PUT" ? request.body : "";
    if (request.method == "PUT" && body.find_first_not_of(" \t\r\n") == std::string::npos)
      return json_message(400, "a PUT gives the value: {\"value\": 3}");
    r.awaits = [=, name = parameter](std::function<void(HttpResponse)> answer) {
      data->parameter(system, component, name, body, respond(std::move(answer)));
    };
  }
  return r;
}

// /v1/vehicles/{sys}/{comp}/mission (GET, PUT, DELETE; ?type=mission|fence|rally, ?format=wpl or
// a text/plain body for QGC WPL 110) and .../mission/current (GET, PUT {"seq": N}).
HttpResponse HttpApi::mission_request(const HttpRequest& request, uint8_t system, uint8_t component, bool current) {
  if (auto refused = method_refused(request, current ? "GET, PUT" : "GET, PUT, DELETE")) return std::move(*refused);
  if (request.method != "GET") {
    if (const int refused = admits_websocket(request); refused != 0)
      return json_message(refused, refused == 401
                                       ? "changing a vehicle's mission needs the bearer token"
                                       : "changing a vehicle's mission from this origin or listener is refused");
  }
  std::optional<uint8_t> type;
  if (const auto t = query_value(request.query, "type")) {
    static const std::map<std::string, uint8_t> types = {{"mission", 0}, {"fence", 1}, {"rally", 2}};
    const auto it = types.find(*t);
    if (it == types.end()) return json_message(400, "type: mission, fence or rally (not " + *t + ")");
    type = it->second;
  }
  const std::optional<std::string> format = query_value(request.query, "format");
  if (format && *format != "wpl" && *format != "plan") return json_message(400, "format: plan or wpl");
  // text/plain is WPL unless the body is plainly JSON (fetch() and curl -d say text/plain, or
  // a form's type, for any string they send).
  const size_t first = request.body.find_first_not_of(" \t\r\n");
  const bool json_body = first != std::string::npos && request.body[first] == '{';
  const bool wpl = (format && *format == "wpl") ||
                   (request.method == "PUT" && !format && request.content_type.starts_with("text/plain") && !json_body);
  HttpResponse r;
  vehicle::VehicleData* data = options_.data;
  const auto respond = [](std::function<void(HttpResponse)> answer) {
    return [answer = std::move(answer)](vehicle::VehicleData::Answer a) {
      answer(HttpResponse{a.status, a.content_type, std::move(a.body) + "\n"});
    };
  };
  if (current) {
    const std::string body = request.method == "PUT" ? request.body : "";
    if (request.method == "PUT" && body.empty()) return json_message(400, "a PUT gives the item: {\"seq\": 3}");
    r.awaits = [=](std::function<void(HttpResponse)> answer) {
      data->mission_current(system, component, body, respond(std::move(answer)));
    };
    return r;
  }
  if (request.method == "PUT" && request.body.find_first_not_of(" \t\r\n") == std::string::npos)
    return json_message(400, "a PUT gives the mission: a .plan, or QGC WPL 110 text (Content-Type: text/plain)");
  r.awaits = [=, method = request.method, body = request.body](std::function<void(HttpResponse)> answer) {
    data->mission(system, component, method, type, wpl, body, respond(std::move(answer)));
  };
  return r;
}

std::shared_ptr<TextSocket> HttpApi::open_text(const HttpRequest& request, std::function<void()> wake, int* status,
                                               std::string* why) {
  const bool known =
      std::find(std::begin(kSocketPaths), std::end(kSocketPaths), request.path) != std::end(kSocketPaths);
  if (!known || options_.data == nullptr) return nullptr;  // the caller's 404
  const int may_send = admits_websocket(request);
  if (options_.token_for_reads && may_send != 0) {
    *status = 401, *why = "this server listens beyond loopback: the WebSocket needs the bearer token\n";
    return nullptr;
  }
  vehicle::JsonFeed::Filter filter;
  const std::string pattern = query_value(request.query, "filter").value_or(".*");
  std::string error;
  auto ids = pattern.size() > kMaxFilter ? std::nullopt : options_.data->matching(pattern, &error);
  if (!ids) {
    *status = 400, *why = (error.empty() ? "the filter is too long" : error) + "\n";
    return nullptr;
  }
  filter.messages = std::move(*ids);
  const auto number = [&](const char* name, double low, double high, double* out) {
    const auto text = query_value(request.query, name);
    if (!text) return true;
    char* end = nullptr;
    const double v = std::strtod(text->c_str(), &end);
    if (text->empty() || *end != '\0' || !(v >= low && v <= high) || (high == 255 && v != std::floor(v))) {
      *status = 400, *why = fmt::format("{}: a number from {} to {}\n", name, low, high);
      return false;
    }
    *out = v;
    return true;
  };
  double system = -1, component = -1;
  if (!number("system", 0, 255, &system) || !number("component", 0, 255, &component) ||
      !number("rate", 0, 1000, &filter.rate))
    return nullptr;
  if (system >= 0) filter.system = static_cast<uint8_t>(system);
  if (component >= 0) filter.component = static_cast<uint8_t>(component);
  return std::make_shared<JsonSocket>(options_.data->open(std::move(filter), std::move(wake)), *options_.data,
                                      may_send);
}

}  // namespace mavswitch::window
