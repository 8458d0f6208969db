// The HTTP server of the operator's window: civetweb (Debian's libcivetweb) on its own threads,
// beside the I/O workers. It hands each request, body read and bounded, to one handler and
// writes back what it answers; what a request may see or change is the handler's business
// (daemon/http_api). It never touches the router itself.
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "config/config.hpp"

struct mg_context;
struct mg_connection;

namespace mavswitch::daemon {

class TlsFront;
class WebSocketEndpoint;

struct HttpRequest {
  std::string method;  // "GET", "POST", ...
  std::string path;    // decoded, without the query
  std::string authorization;
  std::string query;   // after '?', undecoded
  std::string origin;  // the Origin header a browser sends
  std::string host;    // the Host header
  std::string body;
};

struct HttpResponse {
  HttpResponse(int s = 200, std::string type = "application/json", std::string text = "")
      : status(s), content_type(std::move(type)), body(std::move(text)) {}
  int status = 200;
  std::string content_type = "application/json";
  std::string body;
  // Server-sent events: while set, `body` is ignored and each event is next_event()'s text,
  // one every event_period_ms, until the client goes or the server stops.
  std::function<std::string()> next_event;
  int event_period_ms = 1000;
};

class HttpServer {
 public:
  using Handler = std::function<HttpResponse(const HttpRequest&)>;
  static constexpr size_t kMaxBody = 64 * 1024;  // a config section fits many times over
  // Event streams hold a thread each: at most this many at once, so requests still get one.
  static constexpr int kMaxStreams = 4;

  // Listens at once; throws std::runtime_error saying why it cannot (a port in use, a
  // certificate that does not load). With a certificate: HTTPS only, through a TlsFront.
  HttpServer(const HttpConfig& config, Handler handler);
  ~HttpServer();
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  uint16_t port() const noexcept { return port_; }  // the one bound (the config may say 0)
  // Serves MAVLink over WebSocket at the endpoint's path: `admit` decides from the upgrade
  // request who may connect. Before the first client; the endpoint outlives the server.
  using Admit = std::function<bool(const HttpRequest&)>;
  void add_websocket(WebSocketEndpoint& endpoint, Admit admit);
  std::string url() const;

 private:
  static int on_request(mg_connection* conn, void* self);
  void stream(mg_connection* conn, const HttpResponse& response);
  // With a TLS front, civetweb's port is private: only the front's relays are served.
  bool came_through_front(const mg_connection* conn) const;
  struct WebSocketRoute {
    const HttpServer& server;
    WebSocketEndpoint& endpoint;
    Admit admit;
  };
  Handler handler_;
  std::vector<std::unique_ptr<WebSocketRoute>> websockets_;  // civetweb holds their addresses
  std::atomic<bool> stopping_{false};
  std::atomic<int> streams_{0};
  mg_context* context_ = nullptr;
  std::unique_ptr<TlsFront> front_;
  uint16_t port_ = 0;
  bool tls_ = false;
  std::string address_;
};

}  // namespace mavswitch::daemon
