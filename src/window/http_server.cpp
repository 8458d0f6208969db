#include "window/http_server.hpp"

#include <fmt/format.h>
#include <libwebsockets.h>
#include <openssl/ssl.h>
#include <pthread.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <stdexcept>
#include <thread>

#include "base/fault.hpp"
#include "base/file_read.hpp"
#include "base/log.hpp"
#include "base/no_wait.hpp"
#include "router/router.hpp"
#include "transport/event_loop.hpp"
#include "window/http_window.hpp"
#include "window/page_policy.hpp"
#include "window/tls_check.hpp"

namespace mavswitch::window {
namespace {

// libwebsockets says why it failed (a port in use) only in its log: the last error line, kept
// for the exception, and the rest at debug level.
std::mutex lws_error_mutex;
std::string lws_last_error;

void lws_log_line(int level, const char* line) {
  std::string text(line);
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
  if (const auto at = text.find(": "); at != std::string::npos && at < 40) text.erase(0, at + 2);  // its timestamp
  if (level & LLL_ERR) {
    std::lock_guard lock(lws_error_mutex);
    lws_last_error = text;
  }
  log::debug("libwebsockets: {}", text);
}

}  // namespace

int HttpServer::Window::callback(lws* wsi, lws_callback_reasons reason, void* user, void* in, size_t len) {
  auto* window = static_cast<Window*>(lws_context_user(lws_get_context(wsi)));
  if (window == nullptr) return lws_callback_http_dummy(wsi, reason, user, in, len);
  return window->on_event(wsi, reason, in, len);
}

int HttpServer::Window::on_event(lws* wsi, lws_callback_reasons reason, void* in, size_t len) {
  MAVSWITCH_ASSERT_OWNER(*this, "HttpServer's callback");
  switch (reason) {
    case LWS_CALLBACK_HTTP: {
      Session& s = session(wsi);
      s.request = request_of(wsi);
      s.request.path = in != nullptr ? static_cast<const char*>(in) : s.request.path;
      release(s);
      end_large(s);
      s.close_after = false, s.body_read = 0, s.answered = false;
      if (auto refused = refuse_host(wsi, s, false)) return *refused;
      if (s.request.too_long) {
        s.close_after = true;
        return respond(wsi, s, {414, "text/plain", "a path or a query part is at most 1 KiB\n"});
      }
      if (lws_hdr_total_length(wsi, WSI_TOKEN_HTTP_TRANSFER_ENCODING) > 0) {
        s.close_after = true;
        return respond(wsi, s, {411, "text/plain", "a request body needs a Content-Length\n"});
      }
      const std::string length = header(wsi, WSI_TOKEN_HTTP_CONTENT_LENGTH);
      const unsigned long long body = length.empty() ? 0 : std::strtoull(length.c_str(), nullptr, 10);
      if (body > 0 && streams_body(s.request.method, s.request.path)) return stream_body(wsi, s, body);
      const bool large = body > kMaxBody && body <= kMaxLargeBody && takes_large_body(s.request.path);
      if (large && large_bodies >= kMaxLargeBodies) {
        s.close_after = true;
        return respond(wsi, s, {503, "text/plain", "too many large request bodies at once; try again shortly\n"});
      }
      if (large) s.large = true, ++large_bodies;
      s.too_large = body > kMaxBody && !large;
      if (body > std::max(kMaxDiscarded, large ? kMaxLargeBody : 0)) {
        s.close_after = true;  // what it would go on sending is not read
        return respond(wsi, s, {413, "text/plain", "a request body is at most 64 KiB (a mission's 4 MiB)\n"});
      }
      // A body a little too large is read and thrown away before the 413, so that the client
      // reads the answer rather than a reset of a connection closed with its bytes unread.
      s.body_expected = static_cast<size_t>(body);  // at most kMaxDiscarded
      if (body == 0) return answer(wsi, s);
      lws_set_timeout(wsi, PENDING_TIMEOUT_HTTP_CONTENT, kRequestSeconds);
      return 0;
    }
    case LWS_CALLBACK_HTTP_BODY: {
      Session& s = session(wsi);
      if (s.body_read + len > s.body_expected) return -1;  // more than it said
      s.body_read += len;
      if (s.request.body_stream) return take_streamed(wsi, s, in, len);
      if (!s.too_large) s.request.body.append(static_cast<const char*>(in), len);
      return 0;
    }
    case LWS_CALLBACK_HTTP_BODY_COMPLETION: {
      Session& s = session(wsi);
      if (s.request.body_stream) {
        s.request.body_stream->finish(true);  // its reader has it all
        lws_callback_on_writable(wsi);        // an answer that came meanwhile is written now
      }
      // A request that said Content-Length: 0 was answered when its headers came; libwebsockets
      // still reports its (empty) body complete, which must not answer it again.
      if (s.answered) return 0;
      lws_set_timeout(wsi, NO_PENDING_TIMEOUT, 0);
      end_large(s);  // the body is whole: what holds it now is the answer's business
      if (!s.too_large) return answer(wsi, s);
      s.close_after = true;
      return respond(wsi, s, {413, "text/plain", "a request body is at most 64 KiB\n"});
    }
    case LWS_CALLBACK_HTTP_WRITEABLE: return write_http(wsi, session(wsi));
    case LWS_CALLBACK_TIMER: return send_event(wsi, session(wsi));  // an event stream's next event
    case LWS_CALLBACK_HTTP_CONFIRM_UPGRADE: {
      if (in == nullptr || std::strcmp(static_cast<const char*>(in), "websocket") != 0) return -1;
      Session& s = session(wsi);
      s.request = request_of(wsi);
      s.request.upgrade = true;
      if (auto refused = refuse_host(wsi, s, true)) return *refused;
      if (s.request.too_long) return refuse_upgrade(wsi, 414, "a path or a query part is at most 1 KiB\n");
      auto entrance = hooks.find_websocket(s.request.path);
      if (!entrance) {  // a text WebSocket of the API's, or none
        int status = 404;
        std::string why = "no WebSocket endpoint at this path\n";
        s.text = hooks.open_text(s.request, waker(s), &status, &why);
        return s.text ? 0 : refuse_upgrade(wsi, status, why);
      }
      if (const int status = hooks.admit(s.request); status != 0)
        return refuse_upgrade(wsi, status,
                              status == 401 ? "this WebSocket endpoint needs the bearer token\n"
                                            : "this origin may not open the WebSocket endpoint\n");
      if (!entrance->has_room()) {
        log::warning("websocket {}: client {} refused: MaxClients reached", s.request.path, peer_of(wsi));
        return refuse_upgrade(wsi, 503, "the WebSocket endpoint is full (MaxClients)\n");
      }
      s.entrance = std::move(entrance);
      return 0;
    }
    case LWS_CALLBACK_ESTABLISHED: {
      Session& s = session(wsi);
      if (s.text) {
        lws_callback_on_writable(wsi);  // what came meanwhile
        return 0;
      }
      if (s.entrance == nullptr) return -1;
      s.client = s.entrance->open(peer_of(wsi), waker(s));
      return s.client ? 0 : -1;
    }
    case LWS_CALLBACK_RECEIVE: {
      Session& s = session(wsi);
      if (s.text) return received_text(wsi, s, static_cast<const char*>(in), len);
      if (s.client && lws_frame_is_binary(wsi))  // text carries no MAVLink
        s.client->put({static_cast<const uint8_t*>(in), len});
      return 0;
    }
    case LWS_CALLBACK_SERVER_WRITEABLE: {
      Session& s = session(wsi);
      return s.text ? write_texts(wsi, s) : write_frames(wsi, s);
    }
    case LWS_CALLBACK_EVENT_WAIT_CANCELLED: wake_paced(); return 0;
    case LWS_CALLBACK_CLOSED:
    case LWS_CALLBACK_WSI_DESTROY: forget(wsi); return 0;
    default: break;
  }
  return lws_callback_http_dummy(wsi, reason, nullptr, in, len);
}

void HttpServer::Window::wake_paced() {
  if (pace.scheduled) return;  // a look is due: it takes whatever is listed by then
  const lws_usec_t now = lws_now_usecs();
  if (now - pace.last >= pace.spacing) {
    pace.last = now;
    woke();
    return;
  }
  pace.scheduled = true;
  pace.window = this;
  lws_sul_schedule(context, 0, &pace.sul, on_pace, pace.spacing - (now - pace.last));
}

void HttpServer::Window::on_pace(lws_sorted_usec_list_t* sul) {
  Window* w = reinterpret_cast<Pace*>(sul)->window;  // sul is its first member
  w->pace.scheduled = false;
  w->pace.last = lws_now_usecs();
  w->woke();
}

void HttpServer::Window::woke() {
  bell->take(taken);
  for (auto& job : taken.jobs) {
    try {
      job();
    } catch (...) {
      fault::caught("a job posted to the window");
    }
  }
  taken.jobs.clear();
  pace.spacing = static_cast<lws_usec_t>(taken.ready.size()) * kUsPerSession;
  for (const auto& wake : taken.ready) {
    wake->listed.store(false);  // before the look: a ring from now on lists it again
    const auto it = sessions.find(wake->wsi);
    if (it == sessions.end() || it->second->wake != wake) continue;  // it went meanwhile
    Session& s = *it->second;
    // A body held back: read on once its reader made room (no writable turn comes while a
    // request's body is still being read).
    if (s.rx_paused) resume_streamed(wake->wsi, s);
    // Frames or texts to write, a link closed under it, an answer or a body's bytes that came.
    if (s.client || s.text || s.later || s.stream) lws_callback_on_writable(wake->wsi);
  }
  taken.ready.clear();  // the wakes' sessions may go: hold none of them
}

void HttpServer::Window::forget(lws* wsi) {
  const auto it = sessions.find(wsi);
  if (it == sessions.end()) return;
  Session& s = *it->second;
  if (s.request.body_stream) s.request.body_stream->finish(false);  // its client went (no-op once whole)
  release(s);
  end_large(s);
  end_stream(s);
  if (s.client) s.client->close();
  if (s.text) s.text->close();
  if (s.next_event) --streams;
  sessions.erase(it);
}

HttpServer::HttpServer(const config::HttpConfig& config, Hooks hooks) : window_(std::make_unique<Window>()) {
  Window& w = *window_;
  w.hooks = std::move(hooks);
  if (w.hooks.bell) w.bell = w.hooks.bell;
  w.hosts = HostNames(config.server_names);
  w.content_policy = page_policy(config.map_tiles);
  w.tls = !config.certificate.empty();
  w.address = config.address;
  if (w.tls) check_certificate(config.certificate);

  static std::once_flag once;
  std::call_once(once, [] { lws_set_log_level(LLL_ERR | LLL_WARN, lws_log_line); });

  // Reads of 4 KiB; writes of a whole chunk: left at 0, libwebsockets caps each send at the read
  // size and copies the rest of every chunk to a buffer of its own, to send later.
  w.protocols[0] = {"mavswitch", &Window::callback, 0, 4096, 0, nullptr, kChunk};
  w.protocols[1] = {nullptr, nullptr, 0, 0, 0, nullptr, 0};
  // WebSocket clients are pinged when silent 30 s, and closed when silent 60 s more.
  w.idle.secs_since_valid_ping = 30;
  w.idle.secs_since_valid_hangup = 90;

  lws_context_creation_info info{};
  const bool any = config.address == "0.0.0.0" || config.address == "::";
  info.iface = any ? nullptr : config.address.c_str();
  info.port = config.port;
  info.protocols = w.protocols;
  info.user = &w;
  info.vhost_name = "mavswitch";
  info.server_string = "mavswitch";
  info.alpn = "http/1.1";
  info.options = LWS_SERVER_OPTION_FAIL_UPON_UNABLE_TO_BIND;
  // An IPv4 address: an IPv4 socket (peers show as 127.0.0.1:port, not [::ffff:127.0.0.1]:port).
  if (config.address.find(':') == std::string::npos) info.options |= LWS_SERVER_OPTION_DISABLE_IPV6;
  info.timeout_secs = kRequestSeconds;
  info.timeout_secs_ah_idle = kRequestSeconds;
  info.keepalive_timeout = kRequestSeconds;
  // Header space for this many requests being read at once, each held at most kRequestSeconds:
  // slow clients wait out their time without keeping a quick one from its answer.
  info.max_http_header_pool = 4096;
  info.max_http_header_data = kMaxHeaderBytes;
  for (auto& limit : w.limits.token_limit) limit = kMaxTokenBytes;
  w.limits.token_limit[WSI_TOKEN_HTTP_AUTHORIZATION] = kMaxAuthorizationBytes;
  info.token_limits = &w.limits;
  info.retry_and_idle_policy = &w.idle;
  if (w.tls) {
    info.options |= LWS_SERVER_OPTION_DO_SSL_GLOBAL_INIT;
    info.ssl_cert_filepath = config.certificate.c_str();
    info.ssl_private_key_filepath = config.certificate.c_str();
    info.ssl_options_set = SSL_OP_NO_SSLv3 | SSL_OP_NO_TLSv1 | SSL_OP_NO_TLSv1_1;  // TLS 1.2 and later
  }
  w.context = lws_create_context(&info);
  const std::string where = fmt::format("{}:{}", config.address, config.port);
  if (w.context == nullptr) {
    std::lock_guard lock(lws_error_mutex);
    throw std::runtime_error(fmt::format("cannot listen on {}: {}", where,
                                         lws_last_error.empty() ? "libwebsockets refused" : lws_last_error));
  }
  w.bell->start(w.context);
  lws_vhost* vhost = lws_get_vhost_by_name(w.context, "mavswitch");
  const int bound = vhost != nullptr ? lws_get_vhost_listen_port(vhost) : -1;
  w.port = bound > 0 ? static_cast<uint16_t>(bound) : config.port;
  w.thread = std::thread([&w] {
    pthread_setname_np(pthread_self(), "mavswitch-http");  // as top -H and /proc show it
    w.owner = std::this_thread::get_id();
    // It serves every client: it gathers from the router by posting (answer_later.hpp), and
    // work that waits goes to the blocking-work thread (answer_later.hpp:worked_out).
    no_wait::mark("the window's thread");
    w.second.window = &w;
    if (w.hooks.tick) lws_sul_schedule(w.context, 0, &w.second.sul, Window::on_second, LWS_US_PER_SEC);
    while (!w.stopping.load()) lws_service(w.context, 0);
  });
}

HttpServer::~HttpServer() {
  Window& w = *window_;
  w.stopping = true;
  w.bell->stop();  // links that outlive the window ring nothing; jobs left are dropped
  lws_cancel_service(w.context);
  w.thread.join();
  w.owner = std::this_thread::get_id();  // what closing every connection calls runs here now
  lws_context_destroy(w.context);
}

uint16_t HttpServer::port() const noexcept { return window_->port; }

std::string HttpServer::url() const {
  const bool v6 = window_->address.find(':') != std::string::npos;
  return fmt::format("{}://{}:{}", window_->tls ? "https" : "http",
                     v6 ? "[" + window_->address + "]" : window_->address, window_->port);
}

std::string HttpServer::websocket_url() const {
  const std::string http = url();
  return (window_->tls ? "wss" : "ws") + http.substr(http.find(':'));
}

}  // namespace mavswitch::window
