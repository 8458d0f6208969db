// A request body that streams to its handler (HttpServer::streams_body: a file written to a
// vehicle): the handler is called at the headers with HttpRequest::body_stream, and each piece
// of the body is written there as it comes. When the reader (the vehicle's MAVFTP write) is
// kStreamedBodyBytes behind, the client is held back (libwebsockets stops reading its socket)
// until the reader has taken some: a file of any size never sits whole in memory.
#include "window/http_window.hpp"

namespace mavswitch::window {

int HttpServer::Window::stream_body(lws* wsi, Session& s, uint64_t length) {
  // Its answer may come before its body has all come (the vehicle refused the file): nothing
  // else is read from this connection.
  s.close_after = true;
  if (length > kMaxStreamedBody)
    return respond(wsi, s, {413, "text/plain", "a file written to a vehicle is at most 2 GiB\n"});
  if (large_bodies >= kMaxLargeBodies)
    return respond(wsi, s, {503, "text/plain", "too many large request bodies at once; try again shortly\n"});
  s.large = true, ++large_bodies;
  s.request.body_stream = std::make_shared<ByteStream>(kStreamedBodyBytes);
  s.request.body_length = length;
  s.body_expected = static_cast<size_t>(length);
  return answer(wsi, s);
}

// Whether the reader is kStreamedBodyBytes behind: then its next take() wakes this thread, and
// the session's next writable turn looks again (resume_streamed).
static bool behind(ByteStream& body, std::function<void()> wake) {
  if (body.state() != ByteStream::State::kOpen) return false;  // whole, failed or cancelled: read on
  return body.wait_for_room(std::move(wake));
}

int HttpServer::Window::take_streamed(lws* wsi, Session& s, const void* in, size_t len) {
  ByteStream& body = *s.request.body_stream;
  body.write({static_cast<const char*>(in), len});
  if (!s.rx_paused && behind(body, waker(s))) {  // the socket is not read until the reader made room
    s.rx_paused = true;
    // Not the client's slowness: the usual body timeout does not apply while it is held.
    lws_set_timeout(wsi, PENDING_TIMEOUT_HTTP_CONTENT, kLaterSeconds);
    lws_rx_flow_control(wsi, 0);
  }
  return 0;
}

void HttpServer::Window::resume_streamed(lws* wsi, Session& s) {
  // libwebsockets may have passed on more than the room after the pause: still behind, it waits
  // for the next take().
  if (behind(*s.request.body_stream, waker(s))) return;
  s.rx_paused = false;
  lws_rx_flow_control(wsi, 1);
}

// A second's look at every body still streaming: held back, it is let go once its reader has
// room even if the wake-up was missed; read on, libwebsockets is told so again. One pass over
// the sessions, only while such a body exists.
void HttpServer::Window::recheck_streamed() {
  if (large_bodies == 0) return;
  for (auto& [wsi, s] : sessions) {
    const auto& body = s->request.body_stream;
    if (!body || s->body_read >= s->body_expected) continue;  // none, or all of it came
    if (s->rx_paused)
      resume_streamed(wsi, *s);
    else
      lws_rx_flow_control(wsi, 1);
  }
}

}  // namespace mavswitch::window
