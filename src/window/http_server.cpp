#include "window/http_server.hpp"

#include <civetweb.h>
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <mutex>
#include <thread>

#include "window/tls_front.hpp"
#include "window/websocket_link.hpp"

namespace mavswitch::daemon {
namespace {

// civetweb's library state: set up once per process, before the first server.
void init_library_once() {
  static std::once_flag once;
  std::call_once(once, [] { mg_init_library(MG_FEATURES_WEBSOCKET); });
}

HttpRequest request_of(const mg_connection* conn) {
  const mg_request_info* info = mg_get_request_info(conn);
  HttpRequest request;
  request.method = info->request_method ? info->request_method : "";
  request.path = info->local_uri ? info->local_uri : "";
  if (info->query_string) request.query = info->query_string;
  if (const char* v = mg_get_header(conn, "Authorization")) request.authorization = v;
  if (const char* v = mg_get_header(conn, "Origin")) request.origin = v;
  if (const char* v = mg_get_header(conn, "Host")) request.host = v;
  return request;
}

std::string peer_of(const mg_connection* conn) {
  const mg_request_info* info = mg_get_request_info(conn);
  return std::string(info->remote_addr) + ":" + std::to_string(info->remote_port);
}

// A handler that fails (the router stopping under it) answers 503 rather than no answer.
HttpResponse answer(const HttpServer::Handler& handler, const HttpRequest& request) {
  try {
    return handler(request);
  } catch (const std::exception& e) {
    return {503, "text/plain", std::string(e.what()) + "\n"};
  }
}

}  // namespace

HttpServer::HttpServer(const HttpConfig& config, Handler handler)
    : handler_(std::move(handler)), tls_(!config.certificate.empty()), address_(config.address) {
  init_library_once();
  const bool v6 = config.address.find(':') != std::string::npos;
  // With a certificate, civetweb serves a private loopback port and the TLS front the real one.
  const std::string where =
      tls_ ? "127.0.0.1:0" : (v6 ? "[" + config.address + "]" : config.address) + ":" + std::to_string(config.port);
  // Threads: four for requests, the event streams' (kMaxStreams), and one per WebSocket client
  // (civetweb reads each on a thread of its own).
  const std::string threads = std::to_string(4 + kMaxStreams + config.websocket_clients);
  std::vector<const char*> options = {"listening_ports",
                                      where.c_str(),
                                      "num_threads",
                                      threads.c_str(),
                                      "request_timeout_ms",
                                      "10000",
                                      "enable_websocket_ping_pong",
                                      "yes"};
  options.push_back(nullptr);
  // The front before civetweb's threads: they read front_ (never null when tls_), so a request
  // can never find it unset.
  if (tls_) front_ = std::make_unique<TlsFront>(config.address, config.port, config.certificate, std::stoi(threads));
  mg_callbacks callbacks{};
  callbacks.log_message = [](const mg_connection*, const char*) { return 1; };  // said once, by the error below
  mg_init_data init{&callbacks, this, options.data()};
  char text[256] = "";
  unsigned code = 0;
  mg_error_data error{&code, text, sizeof text};
  context_ = mg_start2(&init, &error);
  if (context_ == nullptr) throw std::runtime_error(fmt::format("cannot listen on {}: {}", where, text));
  mg_set_request_handler(context_, "/", &HttpServer::on_request, this);
  mg_server_port ports[2]{};
  if (mg_get_server_ports(context_, 2, ports) > 0) port_ = static_cast<uint16_t>(ports[0].port);
  if (front_) {
    front_->start(port_);
    port_ = front_->port();
  }
}

HttpServer::~HttpServer() {
  stopping_ = true;            // event streams end within one period
  if (front_) front_->stop();  // its relays end first: civetweb's threads see their clients go
  if (context_ != nullptr) mg_stop(context_);
}

void HttpServer::stream(mg_connection* conn, const HttpResponse& response) {
  if (streams_.fetch_add(1) >= kMaxStreams) {
    streams_.fetch_sub(1);
    const std::string busy = "too many event streams open; try again later\n";
    mg_printf(conn, "HTTP/1.1 503 Service Unavailable\r\nContent-Type: text/plain\r\nContent-Length: %zu\r\n\r\n%s",
              busy.size(), busy.c_str());
    return;
  }
  mg_printf(conn,
            "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-store\r\n"
            "X-Content-Type-Options: nosniff\r\nConnection: close\r\n\r\n");
  while (!stopping_) {
    const std::string event = "data: " + response.next_event() + "\n\n";
    if (mg_write(conn, event.data(), event.size()) <= 0) break;  // the client went
    for (int waited = 0; waited < response.event_period_ms && !stopping_; waited += 50) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
  }
  streams_.fetch_sub(1);
}

bool HttpServer::came_through_front(const mg_connection* conn) const {
  if (!tls_) return true;
  const mg_request_info* info = mg_get_request_info(conn);
  return front_->admits(info->remote_addr, info->remote_port);
}

std::string HttpServer::url() const {
  const bool v6 = address_.find(':') != std::string::npos;
  return fmt::format("{}://{}:{}", tls_ ? "https" : "http", v6 ? "[" + address_ + "]" : address_, port_);
}

void HttpServer::add_websocket(WebSocketEndpoint& endpoint, Admit admit) {
  websockets_.push_back(std::make_unique<WebSocketRoute>(WebSocketRoute{*this, endpoint, std::move(admit)}));
  mg_set_websocket_handler(
      context_, endpoint.path().c_str(),
      [](const mg_connection* conn, void* route) {  // the upgrade request: 0 lets it in
        const auto& r = *static_cast<WebSocketRoute*>(route);
        return r.server.came_through_front(conn) && r.admit(request_of(conn)) ? 0 : 1;
      },
      [](mg_connection* conn, void* route) {
        if (!static_cast<WebSocketRoute*>(route)->endpoint.opened(conn, peer_of(conn)))
          mg_websocket_write(conn, MG_WEBSOCKET_OPCODE_CONNECTION_CLOSE, "", 0);
      },
      [](mg_connection* conn, int bits, char* data, size_t size, void* route) {
        const int opcode = bits & 0xf;
        if (opcode == MG_WEBSOCKET_OPCODE_CONNECTION_CLOSE) return 0;
        if (opcode == MG_WEBSOCKET_OPCODE_BINARY || opcode == MG_WEBSOCKET_OPCODE_CONTINUATION)
          static_cast<WebSocketRoute*>(route)->endpoint.received(conn, {reinterpret_cast<uint8_t*>(data), size});
        return 1;  // text, ping and pong carry no MAVLink
      },
      [](const mg_connection* conn, void* route) { static_cast<WebSocketRoute*>(route)->endpoint.closed(conn); },
      websockets_.back().get());
}

int HttpServer::on_request(mg_connection* conn, void* self) {
  const mg_request_info* info = mg_get_request_info(conn);
  HttpRequest request = request_of(conn);
  HttpResponse response;
  const bool chunked = mg_get_header(conn, "Transfer-Encoding") != nullptr;
  if (!static_cast<HttpServer*>(self)->came_through_front(conn)) {
    response = {403, "text/plain", "this port serves the TLS front only\n"};
  } else if (info->content_length > static_cast<long long>(kMaxBody)) {
    response = {413, "text/plain", "a request body is at most 64 KiB\n"};
  } else if (chunked) {
    response = {411, "text/plain", "a request body needs a Content-Length\n"};
  } else {
    char buf[8192];
    // Only the body announced: a request without Content-Length has none (reading on would
    // wait for the client to close).
    for (long long left = std::max(0LL, info->content_length); left > 0;) {
      const int n = mg_read(conn, buf, static_cast<size_t>(std::min<long long>(left, sizeof buf)));
      if (n <= 0) break;
      request.body.append(buf, static_cast<size_t>(n));
      left -= n;
    }
    if (request.body.size() > kMaxBody)
      response = {413, "text/plain", "a request body is at most 64 KiB\n"};
    else
      response = answer(static_cast<HttpServer*>(self)->handler_, request);
  }
  if (response.next_event) {
    static_cast<HttpServer*>(self)->stream(conn, response);
    return 200;
  }
  // The page's own files and scripts only: no inline script, nothing from elsewhere.
  mg_printf(
      conn,
      "HTTP/1.1 %d %s\r\nContent-Type: %s\r\nContent-Length: %zu\r\nCache-Control: no-store\r\n"
      "X-Content-Type-Options: nosniff\r\nContent-Security-Policy: default-src 'self'\r\nConnection: close\r\n%s\r\n",
      response.status, mg_get_response_code_text(conn, response.status), response.content_type.c_str(),
      response.body.size(), response.status == 401 ? "WWW-Authenticate: Bearer realm=\"mavswitch\"\r\n" : "");
  mg_write(conn, response.body.data(), response.body.size());
  return response.status;
}

}  // namespace mavswitch::daemon
