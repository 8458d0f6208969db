// The bodies the window is writing: a large answer held once however many clients read it
// (hold, release), a streamed one that another thread makes as it goes (a vehicle's file or
// log, HttpResponse::stream), written as it comes and never held whole, and server-sent events.
#include <malloc.h>

#include <algorithm>

#include "base/fault.hpp"
#include "router/router.hpp"
#include "window/http_window.hpp"

namespace mavswitch::window {
namespace {

constexpr int kStreamWriteSeconds = 30;  // for a client to take the next chunk (as other answers)

}  // namespace

// A streamed body: what has come, a chunk a turn; nothing there, the stream's ring brings the
// next turn. A stream that failed closes the connection short of its length.
int HttpServer::Window::write_stream(lws* wsi, Session& s) {
  const ByteStream::State state = s.stream->state();
  size_t most = kChunk;
  if (s.stream_left >= 0) most = static_cast<size_t>(std::min<int64_t>(static_cast<int64_t>(most), s.stream_left));
  // The last byte of a known length waits for the maker's end: a client that has every byte
  // goes on at once (its next request to the vehicle) and must find this transfer over.
  if (s.stream_left > 0 && state == ByteStream::State::kOpen)
    most = std::min(most, static_cast<size_t>(s.stream_left - 1));
  bool last = false;
  const size_t n = most > 0 ? s.stream->take(buffer.data() + LWS_PRE, most, &last) : 0;
  if (n > 0) {
    if (s.stream_left >= 0) s.stream_left -= static_cast<int64_t>(n);
    const bool final = s.stream_left == 0 || (s.stream_left < 0 && last);
    if (lws_write(wsi, buffer.data() + LWS_PRE, n, final ? LWS_WRITE_HTTP_FINAL : LWS_WRITE_HTTP) < static_cast<int>(n))
      return -1;
    lws_set_timeout(wsi, PENDING_TIMEOUT_HTTP_CONTENT, kStreamWriteSeconds);
    lws_callback_on_writable(wsi);  // more may be there, or the end
    return 0;
  }
  if (state == ByteStream::State::kOpen) return 0;  // waits for the vehicle, or its end (finish rings)
  // Whole: every byte it said it had (what a maker gives past that is not sent), or, of an
  // unknown length, the maker's whole end.
  const bool whole = s.stream_left >= 0 ? s.stream_left == 0 : state == ByteStream::State::kWhole && last;
  const bool closes = s.stream_closes || s.close_after;
  end_stream(s);
  if (!whole || closes) return -1;
  return lws_http_transaction_completed(wsi) != 0 ? -1 : 0;
}

void HttpServer::Window::end_stream(Session& s) {
  if (!s.stream) return;
  s.stream->cancel();  // the maker stops, if it had not
  s.stream.reset();
  --file_streams;
}

void HttpServer::Window::hold(Session& s, std::shared_ptr<const std::string> body) {
  release(s);
  if (++held[body.get()] == 1) held_bytes += body->size();
  s.out = std::move(body);
}

void HttpServer::Window::release(Session& s) {
  if (!s.out) return;
  const auto it = held.find(s.out.get());
  bool large = false;
  if (it != held.end() && --it->second == 0) {
    held_bytes -= s.out->size();
    held.erase(it);
    large = s.out->size() >= kTrimAfter && s.out.use_count() == 1;
  }
  s.out.reset();
  s.out_at = 0;
  // The last reader of a large answer is done: its pages (and the render's) go back to the
  // system, which glibc's heap would otherwise keep for the next render.
  if (large) malloc_trim(0);
}

// An event stream's timer: its next event, unless the client is still reading the last one.
int HttpServer::Window::send_event(lws* wsi, Session& s) {
  if (!s.next_event || stopping) return -1;
  int next_ms = s.event_period_ms;
  if (!s.out || s.out_at == s.out->size()) {
    std::string event;
    try {
      event = "data: " + s.next_event() + "\n\n";
    } catch (const Router::Stopped&) {
      return -1;
    } catch (...) {
      fault::caught("an event stream");
      return -1;
    }
    // Each event a new state: the state is gathered on a clock of its own, so one not come
    // yet is looked for again shortly rather than sent twice.
    if (s.out && *s.out == event) {
      next_ms = std::min(next_ms, kEventRetryMs);
    } else {
      s.out = std::make_shared<const std::string>(std::move(event));
      s.out_at = 0;
      lws_callback_on_writable(wsi);
    }
  }
  lws_set_timer_usecs(wsi, static_cast<lws_usec_t>(next_ms) * 1000);
  return 0;
}

}  // namespace mavswitch::window
