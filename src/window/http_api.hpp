// What the operator's window answers: the status page (its files, and /api/v1/events, the
// live state once a second), /metrics for Prometheus, /api/v1/... as JSON, and the endpoints
// added and removed at run time. Who may do what:
// - a change (POST, DELETE) needs the bearer token, and is refused outright when no TokenFile
//   is configured: nobody changes the router over the network without one;
// - when the server listens beyond loopback, every request needs the token (without one
//   configured, reads are open and the daemon warns at start);
// - no CORS headers at all, so another site's page cannot read the answers.
#pragma once

#include <string>

#include "rates/message_rates.hpp"
#include "router/router.hpp"
#include "window/endpoint_control.hpp"
#include "window/http_server.hpp"
#include "window/router_report.hpp"

namespace mavswitch::daemon {

class HttpApi {
 public:
  struct Options {
    std::string token;             // empty: no TokenFile (then nothing may change)
    bool token_for_reads = false;  // the server listens beyond loopback, with a token
    bool metrics_per_link = false;
    std::string page_dir;  // the status page's files; empty: none installed
    bool loopback_listener = true;
    std::function<std::string()> more_metrics;   // appended to /metrics
    const VehicleWatch* vehicles = nullptr;      // what components' HEARTBEATs said; read on the router's thread
    const rates::MessageRates* rates = nullptr;  // each link's message rates; read on the router's thread
  };
  HttpApi(Router& router, EndpointControl& control, Options options)
      : router_(router), control_(control), options_(std::move(options)) {}

  HttpResponse handle(const HttpRequest& request);
  // Who may open a MAVLink WebSocket (a link that can command the vehicle): with a TokenFile,
  // whoever gives the token (Authorization: Bearer, or ?token= from a browser); without one,
  // pages of this server and programs (no Origin) on a loopback listener only, so that another
  // site's page in the operator's browser cannot reach the vehicle. 0: let in; else the HTTP
  // status that refuses it (401: no token; 403: an origin or listener it may not come from).
  int admits_websocket(const HttpRequest& request) const;

 private:
  bool token_matches(const HttpRequest& request) const;
  std::map<uint16_t, VehicleWatch::Heartbeat> heartbeats();
  HttpResponse page_file(const std::string& path) const;
  std::string live_state();  // one event of /api/v1/events
  HttpResponse change(const HttpRequest& request);
  Router& router_;
  EndpointControl& control_;
  Options options_;
};

// A JSON POST body as a config section: {"section": "UdpEndpoint", "name": "gcs", "Mode":
// "server", "Port": 14550, ...}; nothing with *error set for one that is not such an object, or
// gives a key twice.
std::optional<ConfigSection> section_of(const std::string& body, std::string* error);
// Whether a body is JSON (an object), else INI text.
bool is_json(const std::string& body);

}  // namespace mavswitch::daemon
