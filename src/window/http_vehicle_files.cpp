// /v1/vehicles/{sys}/{comp}/files/{PATH}: a vehicle's files by MAVFTP (vehicle::VehicleData::file).
// GET lists a directory as JSON or streams a file (?crc=1: its CRC32); PUT writes the body to
// it and DELETE removes it, both with the token. .../logs: its onboard logs
// (vehicle::VehicleData::log): GET lists them, .../logs/ID streams one (a Range of it), DELETE
// erases them all, with the token. .../logs/ID?via=mavftp streams the same log as a file by
// MAVFTP, where ArduPilot keeps it; the log protocol is the default: against ArduPilot SITL it is
// about 90 times faster (docs/BENCHMARKS.md).
#include <fmt/format.h>

#include <array>

#include "window/http_api.hpp"

namespace mavswitch::window {

namespace {

constexpr size_t kMaxPath = 200;  // what fits a MAVFTP request, with room to spare

// A VehicleData answer as the window's: a stream, its length and part, or a body.
std::function<void(vehicle::VehicleData::Answer)> as_response(std::function<void(HttpResponse)> answer) {
  return [answer = std::move(answer)](vehicle::VehicleData::Answer a) {
    HttpResponse out{a.status, a.content_type, a.stream ? std::string() : std::move(a.body) + "\n"};
    out.stream = std::move(a.stream);
    out.length = a.length;
    out.content_range = std::move(a.content_range);
    answer(std::move(out));
  };
}

// Where ArduPilot keeps log N: a board's SD card, then SITL's directory.
constexpr std::array<const char*, 2> kLogFolders = {"/APM/LOGS", "/logs"};

// Log `id` as a file by MAVFTP, from the first of kLogFolders that has it.
void log_by_mavftp(vehicle::VehicleData& data, uint8_t system, uint8_t component, uint16_t id, size_t folder,
                   std::function<void(HttpResponse)> answer) {
  const std::string path = fmt::format("{}/{:08}.BIN", kLogFolders[folder], id);
  data.file(system, component, "GET", path, false, "",
            [&data, system, component, id, folder, answer = std::move(answer)](vehicle::VehicleData::Answer a) mutable {
              if (a.status != 404) return as_response(std::move(answer))(std::move(a));
              if (folder + 1 < kLogFolders.size())
                return log_by_mavftp(data, system, component, id, folder + 1, std::move(answer));
              answer(json_message(404, fmt::format("log {} is in none of ArduPilot's folders ({}, {}); other "
                                                   "autopilots' logs are files: .../files/PATH",
                                                   id, kLogFolders[0], kLogFolders[1])));
            });
}

}  // namespace

HttpResponse HttpApi::file_request(const HttpRequest& request, uint8_t system, uint8_t component, std::string path) {
  if (auto refused = method_refused(request, "GET, HEAD, PUT, DELETE")) return std::move(*refused);
  if (request.method == "PUT" || request.method == "DELETE") {
    if (const int refused = admits_websocket(request); refused != 0)
      return json_message(refused, refused == 401
                                       ? "changing a vehicle's files needs the bearer token"
                                       : "changing a vehicle's files from this origin or listener is refused");
  }
  // ArduPilot's virtual trees (@SYS, @PARAM, @ROMFS) are named as they are; the rest is absolute.
  if (!path.starts_with('@')) path = "/" + path;
  if (path.size() > kMaxPath) return json_message(414, "a vehicle's path is at most 200 bytes");
  if (path.find('\0') != std::string::npos) return json_message(400, "a path has no NUL in it");
  const auto crc = query_value(request.query, "crc");
  if (crc && *crc != "1" && *crc != "0") return json_message(400, "crc: 1 (or 0)");
  const bool want_crc = crc && *crc == "1";
  if (request.method == "PUT" && path.ends_with('/')) return json_message(400, "a PUT names a file, not a directory");
  HttpResponse r;
  vehicle::VehicleData* data = options_.data;
  r.awaits = [=, method = request.method == "HEAD" ? std::string("GET") : request.method,
              body = request.method == "PUT" ? request.body : std::string(), streamed = request.body_stream,
              length = request.body_length](std::function<void(HttpResponse)> answer) {
    data->file(system, component, method, path, want_crc, body, as_response(std::move(answer)), streamed, length);
  };
  return r;
}

HttpResponse HttpApi::log_request(const HttpRequest& request, uint8_t system, uint8_t component,
                                  const std::string& id) {
  if (auto refused = method_refused(request, id.empty() ? "GET, HEAD, DELETE" : "GET, HEAD"))
    return std::move(*refused);
  if (request.method == "DELETE") {
    if (const int refused = admits_websocket(request); refused != 0)
      return json_message(refused, refused == 401 ? "erasing a vehicle's logs needs the bearer token"
                                                  : "erasing a vehicle's logs from this origin or listener is refused");
  }
  const auto via = query_value(request.query, "via");
  if (via && *via != "log" && *via != "mavftp") return json_message(400, "via: log (the log protocol) or mavftp");
  std::optional<uint16_t> log_id;
  if (!id.empty()) {
    const unsigned long n = std::stoul(id);  // 1 to 5 digits (the route's)
    if (n > 0xFFFF) return json_message(404, "a log's id is at most 65535");
    log_id = static_cast<uint16_t>(n);
  }
  HttpResponse r;
  vehicle::VehicleData* data = options_.data;
  if (via == "mavftp" && log_id) {
    if (!request.range.empty()) return json_message(400, "a Range is served by the log protocol: leave out via=mavftp");
    r.awaits = [=, id = *log_id](std::function<void(HttpResponse)> answer) {
      log_by_mavftp(*data, system, component, id, 0, std::move(answer));
    };
    return r;
  }
  r.awaits = [=, method = request.method == "DELETE" ? std::string("DELETE") : std::string("GET"),
              range = request.range](std::function<void(HttpResponse)> answer) {
    data->log(system, component, method, log_id, range, as_response(std::move(answer)));
  };
  return r;
}

}  // namespace mavswitch::window
