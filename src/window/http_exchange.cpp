// The window's exchanges: a request read into an HttpRequest, an answer written in chunks (or
// an event stream), an upgrade refused with its status, a WebSocket client's frames written.
#include <sys/socket.h>

#include <cstring>

#include "base/fault.hpp"
#include "base/log.hpp"
#include "router/router.hpp"
#include "transport/socket_address.hpp"
#include "window/http_window.hpp"

namespace mavswitch::window {
namespace {

constexpr int kChunksPerTurn = 4;  // chunks of WebSocket messages per writable turn: others get theirs
constexpr int kWriteSeconds = 30;  // for a client to take the next chunk of an answer

// The query's parts as the client sent them, joined by '&' (libwebsockets keeps them apart).
std::string query_of(lws* wsi, bool* too_long) {
  std::string query;
  char part[HttpServer::kMaxTokenBytes + 1];
  for (int i = 0; i < 64; ++i) {
    const int n = lws_hdr_copy_fragment(wsi, part, sizeof part, WSI_TOKEN_HTTP_URI_ARGS, i);
    if (n < 0) break;
    if (n >= HttpServer::kMaxTokenBytes - 1) *too_long = true;  // cut by the token limit
    if (!query.empty()) query += '&';
    query.append(part, static_cast<size_t>(n));
  }
  return query;
}

const char* reason_of(int status) {
  switch (status) {
    case 401: return "Unauthorized";
    case 403: return "Forbidden";
    case 404: return "Not Found";
    case 414: return "URI Too Long";
    case 421: return "Misdirected Request";
    case 503: return "Service Unavailable";
    default: return "";
  }
}

}  // namespace

std::string header(lws* wsi, lws_token_indexes token) {
  const int n = lws_hdr_total_length(wsi, token);
  if (n <= 0) return "";
  std::string text(static_cast<size_t>(n) + 1, '\0');
  const int copied = lws_hdr_copy(wsi, text.data(), n + 1, token);
  text.resize(copied > 0 ? static_cast<size_t>(copied) : 0);
  return text;
}

HttpRequest request_of(lws* wsi) {
  static constexpr std::pair<lws_token_indexes, const char*> kMethods[] = {
      {WSI_TOKEN_GET_URI, "GET"},        {WSI_TOKEN_POST_URI, "POST"},   {WSI_TOKEN_PUT_URI, "PUT"},
      {WSI_TOKEN_DELETE_URI, "DELETE"},  {WSI_TOKEN_PATCH_URI, "PATCH"}, {WSI_TOKEN_HEAD_URI, "HEAD"},
      {WSI_TOKEN_OPTIONS_URI, "OPTIONS"}};
  HttpRequest request;
  for (const auto& [token, name] : kMethods) {
    if (lws_hdr_total_length(wsi, token) > 0) {
      request.method = name;
      request.path = header(wsi, token);
      break;
    }
  }
  request.query = query_of(wsi, &request.too_long);
  if (request.path.size() >= static_cast<size_t>(HttpServer::kMaxTokenBytes) - 1) request.too_long = true;
  request.authorization = header(wsi, WSI_TOKEN_HTTP_AUTHORIZATION);
  request.origin = header(wsi, WSI_TOKEN_ORIGIN);
  request.content_type = header(wsi, WSI_TOKEN_HTTP_CONTENT_TYPE);
  request.range = header(wsi, WSI_TOKEN_HTTP_RANGE);
  request.host = header(wsi, WSI_TOKEN_HOST);
  return request;
}

std::string peer_of(lws* wsi) {
  transport::SocketAddress peer;
  socklen_t len = sizeof(sockaddr_storage);
  if (::getpeername(lws_get_socket_fd(wsi), peer.get_mut(), &len) != 0) return "?";
  peer.set_size(len);
  return peer.to_string();
}

// The boundary every request's handler runs inside: the router stopping under it is a 503;
// anything else it throws is a fault (counted, logged once), a 500 that names no internals, and
// the window goes on serving.
HttpResponse guarded_answer(const std::function<HttpResponse()>& handle) {
  try {
    return handle();
  } catch (const Router::Stopped&) {
    return {503, "text/plain", "the router is stopping\n"};
  } catch (...) {
    fault::caught("an HTTP request");
    return {500, "text/plain", "the request failed inside the router (counted as a fault; see its log)\n"};
  }
}

int HttpServer::Window::answer(lws* wsi, Session& s) {
  s.answered = true;
  s.request.room = kMaxHeld - std::min(held_bytes, kMaxHeld);
  HttpResponse r = guarded_answer([&] { return hooks.handler(s.request); });
  if (r.awaits) return await_answer(wsi, s, std::move(r.awaits));
  return respond(wsi, s, std::move(r));
}

// The answer comes back through the session's Later and the bell, and is written on the
// session's next writable turn (write_http).
int HttpServer::Window::await_answer(lws* wsi, Session& s,
                                     std::function<void(std::function<void(HttpResponse)>)> awaits) {
  auto later = std::make_shared<Session::Later>();
  s.later = later;
  lws_set_timeout(wsi, PENDING_TIMEOUT_HTTP_CONTENT, kLaterSeconds);
  awaits([later, wake = waker(s)](HttpResponse r) {
    {
      std::lock_guard lock(later->mutex);
      later->answer = std::move(r);
    }
    wake();
  });
  return 0;
}

int HttpServer::Window::respond(lws* wsi, Session& s, HttpResponse r) {
  s.answered = true;
  if (r.next_event && streams >= kMaxStreams) r = {503, "text/plain", "too many event streams open; try again later\n"};
  if (r.stream && file_streams >= kMaxFileStreams) {
    r.stream->cancel();
    r = {503, "text/plain", "too many files from vehicles being read at once; try again shortly\n"};
  }
  const size_t size = r.shared_body ? r.shared_body->size() : r.body.size();
  const bool shared_held = r.shared_body && held.contains(r.shared_body.get());
  if (size > kChunk && !shared_held && held_bytes + size > kMaxHeld)
    r = {503, "text/plain", "answers not yet read by their clients fill the window's memory; try again shortly\n"};
  const bool stream = r.next_event != nullptr;
  uint8_t head[LWS_PRE + 2048];
  uint8_t *start = head + LWS_PRE, *p = start, *end = head + sizeof head - 1;
  const auto add = [&](const char* name, const std::string& value) {
    return lws_add_http_header_by_name(wsi, reinterpret_cast<const uint8_t*>(name),
                                       reinterpret_cast<const uint8_t*>(value.data()), int(value.size()), &p, end) == 0;
  };
  const bool unknown_length = stream || (r.stream && r.length < 0);
  const lws_filepos_t length = unknown_length  ? LWS_ILLEGAL_HTTP_CONTENT_LEN
                               : r.stream      ? static_cast<lws_filepos_t>(r.length)
                               : r.shared_body ? r.shared_body->size()
                                               : r.body.size();
  bool ok =
      lws_add_http_common_headers(wsi, static_cast<unsigned>(r.status), r.content_type.c_str(), length, &p, end) == 0 &&
      add("cache-control:", "no-store") && add("x-content-type-options:", "nosniff");
  if (ok && !stream) ok = add("content-security-policy:", content_policy);
  if (ok && r.status == 401) ok = add("www-authenticate:", "Bearer realm=\"mavswitch\"");
  if (ok && r.stream) ok = add("accept-ranges:", "bytes");
  if (ok && !r.content_range.empty()) ok = add("content-range:", r.content_range);
  if (ok && (unknown_length || s.close_after)) ok = add("connection:", "close");
  if (!ok || lws_finalize_write_http_header(wsi, start, &p, end) != 0) {
    if (r.stream) r.stream->cancel();
    return -1;
  }
  if (r.stream) {
    ++file_streams;
    s.stream = std::move(r.stream);
    s.stream_closes = r.length < 0;
    s.stream->on_data(waker(s));
    s.stream_left = r.length;
    if (s.request.method == "HEAD") {
      end_stream(s);
      return lws_http_transaction_completed(wsi) != 0 ? -1 : 0;
    }
    lws_set_timeout(wsi, PENDING_TIMEOUT_HTTP_CONTENT, kWriteSeconds);
    lws_callback_on_writable(wsi);
    return 0;
  }
  if (stream) {
    ++streams;
    s.next_event = std::move(r.next_event);
    s.event_period_ms = r.event_period_ms;
    lws_set_timeout(wsi, NO_PENDING_TIMEOUT, 0);
    lws_set_timer_usecs(wsi, 1);  // the first event at once
    return 0;
  }
  if (s.request.method != "HEAD")
    hold(s, r.shared_body ? std::move(r.shared_body) : std::make_shared<const std::string>(std::move(r.body)));
  s.out_at = 0;
  // The request's own time is up (it came whole): the answer gets kWriteSeconds a chunk, so a
  // slow reader of a large one is served and one that stops reading is closed.
  lws_set_timeout(wsi, PENDING_TIMEOUT_HTTP_CONTENT, kWriteSeconds);
  lws_callback_on_writable(wsi);
  return 0;
}

int HttpServer::Window::write_http(lws* wsi, Session& s) {
  if (s.stream) return write_stream(wsi, s);
  if (s.later) {  // waiting for an answer: written once it came
    std::optional<HttpResponse> r;
    {
      std::lock_guard lock(s.later->mutex);
      r.swap(s.later->answer);
    }
    if (!r) return 0;
    s.later.reset();
    return respond(wsi, s, std::move(*r));
  }
  const size_t left = s.out ? s.out->size() - s.out_at : 0;
  if (left > 0) {
    const size_t n = std::min(left, kChunk);
    std::memcpy(buffer.data() + LWS_PRE, s.out->data() + s.out_at, n);
    const bool last = !s.next_event && n == left;
    if (lws_write(wsi, buffer.data() + LWS_PRE, n, last ? LWS_WRITE_HTTP_FINAL : LWS_WRITE_HTTP) < static_cast<int>(n))
      return -1;
    s.out_at += n;
    if (!s.next_event) lws_set_timeout(wsi, PENDING_TIMEOUT_HTTP_CONTENT, kWriteSeconds);
    // Once more when all is written: libwebsockets calls back only after it has sent what the
    // kernel did not take, and ending the response before that would cut it short.
    if (!s.next_event) lws_callback_on_writable(wsi);
    return 0;
  }
  if (s.next_event) return 0;  // the stream goes on
  release(s);
  if (s.close_after) return -1;
  return lws_http_transaction_completed(wsi) != 0 ? -1 : 0;
}

std::optional<int> HttpServer::Window::refuse_host(lws* wsi, Session& s, bool upgrade) {
  if (hosts.allows(s.request.host)) return std::nullopt;
  refused_hosts.line(log::Level::kWarning,
                     "http: a request from {} for Host {} refused (421): not a literal address, a loopback name or a "
                     "ServerName",
                     peer_of(wsi), s.request.host);
  const std::string why = "this server does not answer for that Host; name it in [Http] ServerName\n";
  if (upgrade) return refuse_upgrade(wsi, 421, why);
  s.answered = true;
  s.close_after = true;
  return respond(wsi, s, {421, "text/plain", why});
}

int HttpServer::Window::refuse_upgrade(lws* wsi, int status, const std::string& why) {
  uint8_t head[LWS_PRE + 1024];
  uint8_t *start = head + LWS_PRE, *p = start, *end = head + sizeof head - 1;
  const std::string bearer = "Bearer realm=\"mavswitch\"";
  if (lws_add_http_common_headers(wsi, static_cast<unsigned>(status), "text/plain", why.size(), &p, end) != 0 ||
      (status == 401 && lws_add_http_header_by_name(wsi, reinterpret_cast<const uint8_t*>("www-authenticate:"),
                                                    reinterpret_cast<const uint8_t*>(bearer.data()), int(bearer.size()),
                                                    &p, end) != 0) ||
      lws_finalize_write_http_header(wsi, start, &p, end) != 0)
    return -1;
  std::memcpy(buffer.data() + LWS_PRE, why.data(), why.size());
  if (lws_write(wsi, buffer.data() + LWS_PRE, why.size(), LWS_WRITE_HTTP_FINAL) < static_cast<int>(why.size()))
    return -1;
  log::debug("http: a WebSocket upgrade refused: {} {}", status, reason_of(status));
  return 1;
}

namespace {

// One WebSocket message, framed here: FIN and `opcode`, a length of 2 or 4 header bytes (server
// frames are not masked), then `bytes`. The bytes it took at `to`; 0 when it does not fit `room`.
size_t put_message(uint8_t* to, size_t room, uint8_t opcode, const void* bytes, size_t n) {
  const size_t head = n < 126 ? 2 : 4;
  if (n > 0xFFFF || head + n > room) return 0;
  to[0] = static_cast<uint8_t>(0x80 | opcode);
  if (head == 2) {
    to[1] = static_cast<uint8_t>(n);
  } else {
    to[1] = 126;
    to[2] = static_cast<uint8_t>(n >> 8);
    to[3] = static_cast<uint8_t>(n);
  }
  std::memcpy(to + head, bytes, n);
  return head + n;
}

}  // namespace

// Frames go out one MAVLink frame a binary message, the messages framed here and as many as fit
// a chunk written at once: one system call for a batch, not one a frame (libwebsockets frames one
// message a call). A client may read them as it reads a stream, but need not.
int HttpServer::Window::write_frames(lws* wsi, Session& s) {
  if (!s.client || s.client->closed()) return -1;
  transport::FrameBatch& p = s.pending;
  for (int turn = 0; turn < kChunksPerTurn; ++turn) {
    if (s.pending_frame == p.sizes.size()) {
      s.client->take(p);
      s.pending_frame = 0, s.pending_at = 0;
      if (p.empty()) return 0;
    }
    if (lws_send_pipe_choked(wsi)) break;
    uint8_t* const start = buffer.data() + LWS_PRE;
    size_t used = 0;
    for (; s.pending_frame < p.sizes.size(); ++s.pending_frame) {
      const size_t size = p.sizes[s.pending_frame];
      const size_t put = put_message(start + used, kChunk - used, 0x2, p.bytes.data() + s.pending_at, size);
      if (put == 0) break;
      used += put, s.pending_at += size;
    }
    if (used > 0 && lws_write(wsi, start, used, LWS_WRITE_RAW) < static_cast<int>(used)) return -1;
  }
  lws_callback_on_writable(wsi);  // more than a turn's worth, or the pipe is full: the next turn
  return 0;
}

// Texts go out as frames do (write_frames), each a text message.
int HttpServer::Window::write_texts(lws* wsi, Session& s) {
  for (int turn = 0; turn < kChunksPerTurn; ++turn) {
    if (s.next_text == s.texts.size()) {
      s.texts.clear();
      s.next_text = 0;
      s.text->take(s.texts);
      if (s.texts.empty()) return 0;
    }
    if (lws_send_pipe_choked(wsi)) break;
    uint8_t* const start = buffer.data() + LWS_PRE;
    size_t used = 0;
    for (; s.next_text < s.texts.size(); ++s.next_text) {
      const std::string& text = *s.texts[s.next_text];
      if (text.size() + 4 > kChunk) continue;  // no message's JSON is near this
      const size_t put = put_message(start + used, kChunk - used, 0x1, text.data(), text.size());
      if (put == 0) break;
      used += put;
    }
    if (used > 0 && lws_write(wsi, start, used, LWS_WRITE_RAW) < static_cast<int>(used)) return -1;
  }
  lws_callback_on_writable(wsi);
  return 0;
}

constexpr size_t kMaxAnswers = 1024;

int HttpServer::Window::received_text(lws* wsi, Session& s, const char* in, size_t len) {
  if (lws_frame_is_binary(wsi)) return 0;            // MAVLink frames go to a [WebSocketEndpoint]
  if (s.text_in.size() + len > kMaxBody) return -1;  // a message is a few hundred bytes
  s.text_in.append(in, len);
  if (!lws_is_final_fragment(wsi)) return 0;
  std::string answer = s.text->receive(s.text_in);
  s.text_in.clear();
  // A client that sends without reading its answers gets no more of them past a bound.
  if (!answer.empty() && s.texts.size() - s.next_text < kMaxAnswers) {
    s.texts.push_back(std::make_shared<const std::string>(std::move(answer)));
    lws_callback_on_writable(wsi);
  }
  return 0;
}

}  // namespace mavswitch::window
