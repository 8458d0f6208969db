// The HTTP server of the operator's window: civetweb (Debian's libcivetweb) on its own threads,
// beside the I/O workers. It hands each request, body read and bounded, to one handler and
// writes back what it answers; what a request may see or change is the handler's business
// (daemon/http_api). It never touches the router itself.
#pragma once

#include <functional>
#include <stdexcept>
#include <string>

#include "daemon/config.hpp"

struct mg_context;
struct mg_connection;

namespace mavswitch::daemon {

struct HttpRequest {
  std::string method;  // "GET", "POST", ...
  std::string path;    // decoded, without the query
  std::string authorization;
  std::string body;
  bool loopback = false;  // the client's address is a loopback one
};

struct HttpResponse {
  int status = 200;
  std::string content_type = "application/json";
  std::string body;
};

class HttpServer {
 public:
  using Handler = std::function<HttpResponse(const HttpRequest&)>;
  static constexpr size_t kMaxBody = 64 * 1024;  // a config section fits many times over

  // Listens at once; throws std::runtime_error saying why it cannot (a port in use).
  HttpServer(const HttpConfig& config, Handler handler);
  ~HttpServer();
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  uint16_t port() const noexcept { return port_; }  // the one bound (the config may say 0)
  std::string url() const;

 private:
  static int on_request(mg_connection* conn, void* self);
  Handler handler_;
  mg_context* context_ = nullptr;
  uint16_t port_ = 0;
  bool tls_ = false;
  std::string address_;
};

}  // namespace mavswitch::daemon
