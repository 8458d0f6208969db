// The HTTP server of the operator's window: libwebsockets (Debian's) serving HTTP, WebSocket
// and TLS on one thread of its own, beside the I/O workers, every connection an event on that
// thread's poll (none holds a thread). It hands each request, body read and bounded, to one
// handler and writes back what it answers; WebSocket upgrades at an endpoint's path become that
// endpoint's clients. What a request may see or change is the handler's business
// (window/http_api); it never touches the router itself.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "base/byte_stream.hpp"
#include "config/config.hpp"
#include "transport/handoff.hpp"

namespace mavswitch::window {

struct HttpRequest {
  std::string method;  // "GET", "POST", ...
  std::string path;    // decoded, without the query
  std::string authorization;
  std::string query;         // after '?': its parts joined by '&', each as the client sent it
  std::string origin;        // the Origin header a browser sends
  std::string host;          // the Host header
  std::string content_type;  // the Content-Type header
  std::string range;         // the Range header
  std::string body;
  // A body that streams to its handler instead (a file PUT to a vehicle, streams_body()): the
  // handler has the request at its headers, and the window writes the body here as it comes,
  // holding the client back while the reader is behind; `body` stays empty.
  std::shared_ptr<ByteStream> body_stream;
  uint64_t body_length = 0;
  bool upgrade = false;    // a WebSocket upgrade (the only request that may carry ?token=)
  bool too_long = false;   // its path or a part of its query was cut at kMaxTokenBytes: answered 414
  size_t room = SIZE_MAX;  // bytes the window can still hold for unread answers (HttpServer::kMaxHeld)
};

struct HttpResponse {
  HttpResponse(int s = 200, std::string type = "application/json", std::string text = "")
      : status(s), content_type(std::move(type)), body(std::move(text)) {}
  int status = 200;
  std::string content_type = "application/json";
  std::string body;
  // A large body that several answers share (the whole vehicle tree): used instead of `body`
  // when set, and held once however many slow readers are still taking it.
  std::shared_ptr<const std::string> shared_body;
  // Server-sent events: while set, `body` is ignored and each event is next_event()'s text,
  // pushed every event_period_ms until the client goes or the server stops; a text the same
  // as the last one is not sent again (looked for again shortly: http_window.hpp, kEventRetryMs).
  std::function<std::string()> next_event;
  int event_period_ms = 1000;
  // The one way an answer comes later: another thread gives it when it has it (a vehicle's
  // reply, what the router's thread gathered, a change worked out on the blocking-work thread:
  // window/answer_later.hpp). Called once on the window's thread with `answer`, which whoever
  // has the answer calls once, from any thread. While set, the rest is ignored; the window's
  // thread serves the others meanwhile.
  std::function<void(std::function<void(HttpResponse)> answer)> awaits;
  // Bytes that come as another thread makes them (a file from a vehicle): written as they come,
  // `length` of them when known (-1: not known, and the connection closes at their end); a
  // client that goes cancels it.
  std::shared_ptr<ByteStream> stream;
  int64_t length = -1;
  std::string content_range;  // a part's Content-Range (206, 416)
};

// A WebSocket whose messages are text (JSON) rather than MAVLink frames. The window's thread
// takes what waits to be written and hands over each whole message the client sends.
class TextSocket {
 public:
  using Text = std::shared_ptr<const std::string>;
  virtual ~TextSocket() = default;
  virtual void take(std::vector<Text>& out) = 0;  // what waits, oldest first, in `out` (emptied first)
  // A message of the client's; what to answer it (nothing when empty).
  virtual std::string receive(std::string_view text) = 0;
  virtual void close() = 0;  // the client went
};

class Bell;

class HttpServer {
 public:
  using Handler = std::function<HttpResponse(const HttpRequest&)>;
  // Who may open a WebSocket, from the upgrade request: 0 (let in) or the HTTP status that
  // refuses it (401, 403).
  using Admit = std::function<int(const HttpRequest&)>;
  // The WebSocket endpoint at a path, or null (404).
  using FindWebSocket = std::function<std::shared_ptr<transport::HandoffEntrance>(const std::string& path)>;
  // A text WebSocket for an upgrade request, or null with the refusal (*status: 404 for a path
  // that has none, 400, 401, 403) and *why. `wake`: texts wait (any thread).
  using OpenText = std::function<std::shared_ptr<TextSocket>(const HttpRequest&, std::function<void()> wake,
                                                             int* status, std::string* why)>;
  // What the server calls: every hook of the window's, all of them given.
  struct Hooks {
    Handler handler;
    FindWebSocket find_websocket;
    OpenText open_text;
    Admit admit;
    // Once a second on the window's thread (what the window keeps a history of); may be empty.
    std::function<void()> tick;
    // How other threads post work to the window's thread (bell.hpp): given, so that the
    // handler can post before the server exists; null: the server makes its own.
    std::shared_ptr<Bell> bell;
  };
  static constexpr size_t kMaxBody = 64 * 1024;  // a config section fits many times over
  // A vehicle's mission (a .plan of thousands of items) or parameter file may be larger, a few
  // at once: memory for bodies stays bounded (kMaxLargeBodies * kMaxLargeBody) whoever sends them.
  static constexpr size_t kMaxLargeBody = 4 * 1024 * 1024;
  static constexpr int kMaxLargeBodies = 4;
  static bool takes_large_body(const std::string& path) {
    return path.starts_with("/v1/vehicles/") && (path.ends_with("/mission") || path.ends_with("/parameters"));
  }
  // A file written to a vehicle streams: never held whole, whatever its size (up to MAVFTP's
  // offsets), kStreamedBodyBytes at most at once; it takes one of the kMaxLargeBodies places.
  static bool streams_body(const std::string& method, const std::string& path) {
    return method == "PUT" && path.starts_with("/v1/vehicles/") && path.find("/files/") != std::string::npos;
  }
  static constexpr uint64_t kMaxStreamedBody = uint64_t{1} << 31;
  static constexpr size_t kStreamedBodyBytes = 256 * 1024;
  static constexpr size_t kMaxDiscarded = 1024 * 1024;  // a larger body is not read at all
  static constexpr int kMaxStreams = 64;                // event streams at once
  static constexpr int kMaxFileStreams = 8;             // files from vehicles at once
  // Answers written but not yet taken by their clients, in all (a body shared by several counted
  // once): past this, a new answer larger than a chunk is refused with 503 until readers catch up.
  static constexpr size_t kMaxHeld = 8 * 1024 * 1024;
  // A request's line and headers, in all (libwebsockets' header space per connection); each
  // header kept to kMaxTokenBytes (the bearer token's to kMaxTokenFile), so that a long path,
  // query or header is cut short rather than overflowing that space, and answered 414.
  static constexpr int kMaxHeaderBytes = 8 * 1024;
  static constexpr int kMaxTokenBytes = 1024;
  static constexpr int kMaxAuthorizationBytes = 4096 + 16;
  // A connection that has not sent a whole request (or finished its TLS handshake) this long
  // after it came is closed: slow clients cannot hold the window.
  static constexpr int kRequestSeconds = 5;

  // Listens at once and starts the window's thread; throws std::runtime_error saying why it
  // cannot (a port in use, a certificate that does not load). With a certificate: HTTPS and
  // wss:// only.
  HttpServer(const config::HttpConfig& config, Hooks hooks);
  ~HttpServer();
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  uint16_t port() const noexcept;     // the one bound
  std::string url() const;            // http://127.0.0.1:8080
  std::string websocket_url() const;  // ws://127.0.0.1:8080

 private:
  struct Window;  // libwebsockets' context and the sessions, on the window's thread
  std::unique_ptr<Window> window_;
};

}  // namespace mavswitch::window
