// What the operator's window answers: the status page (its files, and /api/v1/events, the
// live state once a second), /metrics for Prometheus, /api/v1/... as JSON, and the endpoints
// added and removed at run time. Who may do what:
// - a change (POST, DELETE) needs the bearer token, and is refused outright when no TokenFile
//   is configured: nobody changes the router over the network without one;
// - when the server listens beyond loopback, every request needs the token (without one
//   configured, reads are open and the daemon warns at start);
// - no CORS headers at all, so another site's page cannot read the answers.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>

#include "rates/message_rates.hpp"
#include "router/router.hpp"
#include "vehicle/vehicle_data.hpp"
#include "window/answer_later.hpp"
#include "window/bell.hpp"
#include "window/endpoint_control.hpp"
#include "window/history.hpp"
#include "window/http_server.hpp"
#include "window/router_report.hpp"

namespace mavswitch::window {

// What the running program is (mavlink2rest's /info): its version, the commit it was built from,
// and that commit's date.
struct Program {
  std::string version, sha, build_date;
};

class HttpApi {
 public:
  struct Options {
    std::string token;             // empty: no TokenFile (then nothing may change)
    bool token_for_reads = false;  // the server listens beyond loopback, with a token
    bool metrics_per_link = false;
    std::string map_tiles;  // [Http] MapTiles, for the page
    std::string page_dir;   // the status page's files; empty: none installed
    bool loopback_listener = true;
    std::function<std::string()> more_metrics;       // appended to /metrics; run on the router's thread
    const VehicleWatch* vehicles = nullptr;          // what components' HEARTBEATs said; read on the router's thread
    const rates::MessageRates* rates = nullptr;      // each link's message rates; read on the router's thread
    vehicle::VehicleData* data = nullptr;            // the vehicles' messages (mavlink2rest's API); null: none
    Program program;                                 // for /info
    std::map<uint16_t, std::string> own_components;  // system << 8 | component -> what it is, of the router's own
    RunLater run_later;                              // the blocking-work thread, for changes
  };
  HttpApi(Router& router, EndpointControl& control, Options options)
      : router_(router), control_(control), options_(std::move(options)) {}

  // How the router's thread posts back what it gathered (answer_later.hpp); the server rings
  // the same bell (HttpServer::Hooks::bell).
  std::shared_ptr<Bell> bell() const { return bell_; }

  HttpResponse handle(const HttpRequest& request);
  // Once a second, on the window's thread: the history's next second.
  void tick();
  // Who may open a MAVLink WebSocket or send to a vehicle: with a TokenFile, whoever gives the
  // token (Authorization: Bearer; ?token= on a WebSocket upgrade only); without one,
  // pages of this server and programs (no Origin) on a loopback listener only, so that another
  // site's page in the operator's browser cannot reach the vehicle. 0: let in; else the HTTP
  // status that refuses it (401: no token; 403: an origin or listener it may not come from).
  int admits_websocket(const HttpRequest& request) const;
  // A WebSocket of mavlink2rest's (/v1/ws/mavlink?filter=REGEX&system=&component=&rate=): JSON of
  // each routed message it wants; what its client sends is sent on as a POST's body would be,
  // when it may command. Null with the refusal otherwise (HttpServer::OpenText).
  std::shared_ptr<TextSocket> open_text(const HttpRequest& request, std::function<void()> wake, int* status,
                                        std::string* why);

 private:
  bool token_matches(const HttpRequest& request) const;
  // Router's thread: what VehicleWatch heard (none without one).
  std::map<uint16_t, VehicleWatch::Heartbeat> heartbeats() const;
  HttpResponse page_file(const std::string& path) const;
  std::string live_state();     // one event of /api/v1/events: the last second's, rendered once
  HttpResponse status_texts();  // /api/v1/statustext
  // The window's thread: a second's state into the history.
  void keep(const RouterSnapshot& s, const std::vector<NewestFrames::Slot>& positions);
  HttpResponse change(const HttpRequest& request);
  std::optional<HttpResponse> vehicle_data(const HttpRequest& request);  // mavlink2rest's paths; none: not one
  HttpResponse vehicle_request(const HttpRequest& request);              // /v1/vehicles/...
  HttpResponse mission_request(const HttpRequest& request, uint8_t system, uint8_t component, bool current);
  HttpResponse file_request(const HttpRequest& request, uint8_t system, uint8_t component, std::string path);
  HttpResponse log_request(const HttpRequest& request, uint8_t system, uint8_t component, const std::string& id);
  Router& router_;
  EndpointControl& control_;
  Options options_;
  std::shared_ptr<Bell> bell_ = std::make_shared<Bell>();
  History history_;  // the window's thread
  // What the last tick gathered for the event streams (the window's thread): rendered once, at
  // the first stream's event after it, however many streams there are.
  struct Live {
    RouterSnapshot snapshot;
    std::map<uint16_t, VehicleWatch::Heartbeat> heartbeats;
  };
  std::optional<Live> live_;
  std::string live_text_;
};

// A JSON POST body as a config section: {"section": "UdpEndpoint", "name": "gcs", "Mode":
// "server", "Port": 14550, ...}; nothing with *error set for one that is not such an object, or
// gives a key twice.
std::optional<config::ConfigSection> section_of(const std::string& body, std::string* error);
// Whether a body is JSON (an object), else INI text.
bool is_json(const std::string& body);
// /api/v1/statustext's document: each system's last STATUSTEXT lines, oldest first.
std::string status_text_json(const std::vector<std::pair<uint8_t, std::deque<StatusTextHistory::Line>>>& all);
// {"result": message} under 300, {"error": message} from 300 on.
HttpResponse json_message(int status, const std::string& message);
// 405 naming `allowed` ("GET, PUT") when the request's method is not one of its names (a whole
// name: "PU" is not "PUT", nor is an empty method); nothing when it is.
std::optional<HttpResponse> method_refused(const HttpRequest& request, std::string_view allowed);
// A query parameter's value, percent-decoded ("filter" of "filter=RC_.%2A&system=1"); none when absent.
std::optional<std::string> query_value(std::string_view query, std::string_view name);

}  // namespace mavswitch::window
