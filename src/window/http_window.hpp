// What the window's thread keeps (window/http_server): libwebsockets' context and a session per
// connection, and the parts of an exchange that http_server.cpp (the context, its thread and
// the events) and http_exchange.cpp (reading requests, writing answers and frames) share. Private
// to those two files.
#pragma once

#include <libwebsockets.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "base/log.hpp"
#include "transport/handoff.hpp"
#include "window/bell.hpp"
#include "window/host_names.hpp"
#include "window/http_server.hpp"

namespace mavswitch::window {

constexpr size_t kChunk = 16 * 1024;        // of a response body, per writable turn
constexpr size_t kTrimAfter = 1024 * 1024;  // an answer this large, freed: memory given back
// For an answer worked out elsewhere (a reload, a vehicle's transaction): a backstop, since the
// engine ends every transaction itself; a 500-item mission over a lossy radio takes minutes.
constexpr int kLaterSeconds = 600;
constexpr int kEventRetryMs = 100;  // an event stream whose state has not changed yet looks again

// A request header's value ("" when absent).
std::string header(lws* wsi, lws_token_indexes token);
// The request as the handler sees it (method, path, query, the headers it reads).
HttpRequest request_of(lws* wsi);
// "127.0.0.1:50412"
std::string peer_of(lws* wsi);

// One connection: an HTTP request being read or answered, an event stream, or a WebSocket
// client. The window's thread only, but `wake`, which another thread rings (Bell).
struct Session {
  HttpRequest request;
  size_t body_expected = 0;
  size_t body_read = 0;
  bool too_large = false;                  // its body is read and dropped, then answered 413
  bool large = false;                      // it holds one of the kMaxLargeBodies places
  bool rx_paused = false;                  // its streamed body waits for its reader (http_upload.cpp)
  std::shared_ptr<const std::string> out;  // a response's body (headers already sent); null: none
  size_t out_at = 0;                       // how much of it is sent
  bool answered = false;                   // this request has its answer (one per request)
  bool close_after = false;                // the connection ends with this response
  std::function<std::string()> next_event;
  int event_period_ms = 1000;
  std::shared_ptr<transport::HandoffEntrance> entrance;  // a WebSocket client's endpoint
  std::shared_ptr<transport::Handoff> client;            // its link's side here
  std::shared_ptr<TextSocket> text;                      // a text WebSocket (JSON)
  std::vector<TextSocket::Text> texts;                   // taken from it, not all written yet
  size_t next_text = 0;                                  // the next of `texts` to write
  std::string text_in;                                   // a message of the client's, its fragments so far
  transport::FrameBatch pending;                         // taken from the client's link, not all written yet
  size_t pending_frame = 0;                              // the next of `pending` to write
  size_t pending_at = 0;                                 // its first byte
  std::shared_ptr<Wake> wake = std::make_shared<Wake>();
  // An answer being worked out elsewhere (HttpResponse::awaits): set by the job when done, then
  // the bell rung; shared with the job, which may outlive the session.
  struct Later {
    std::mutex mutex;
    std::optional<HttpResponse> answer;  // under mutex
  };
  std::shared_ptr<Later> later;
  std::shared_ptr<ByteStream> stream;  // an answer's body as it comes (HttpResponse::stream)
  bool stream_closes = false;          // its length was not known: the connection ends with it
  int64_t stream_left = -1;            // of its length, the bytes not yet written (-1: not known)
};

struct HttpServer::Window {
  Hooks hooks;
  HostNames hosts{{}};
  std::string content_policy;  // the page's Content-Security-Policy
  log::Throttle refused_hosts;
  // Bodies being written, each once however many sessions share it, and their bytes.
  std::unordered_map<const std::string*, int> held;
  size_t held_bytes = 0;
  void hold(Session& s, std::shared_ptr<const std::string> body);
  void release(Session& s);
  bool tls = false;
  std::string address;
  uint16_t port = 0;
  lws_context* context = nullptr;
  lws_retry_bo_t idle{};
  lws_token_limits limits{};
  lws_protocols protocols[2]{};
  std::unordered_map<lws*, std::unique_ptr<Session>> sessions;  // the window's thread
  int streams = 0;                                              // the window's thread
  int file_streams = 0;                                         // the window's thread
  int large_bodies = 0;                                         // the window's thread
  void end_large(Session& s) {
    if (s.large) s.large = false, --large_bodies;
  }
  std::atomic<bool> stopping{false};
  std::shared_ptr<Bell> bell = std::make_shared<Bell>();
  Bell::Batch taken;  // the window's thread: what the bell held, taken
  // What another thread calls to have session `s` looked at (its writable turn, a held body).
  std::function<void()> waker(const Session& s) const {
    return [bell = bell, wake = s.wake] { bell->ring(wake); };
  }
  void woke();               // the window's thread: the bell's list looked at
  size_t most_sessions = 0;  // the window's thread: since the last trim
  int trims_due = 0;         // the window's thread
  void trim_after_leaving();
  std::thread thread;
  std::thread::id owner;
  std::vector<uint8_t> buffer = std::vector<uint8_t>(LWS_PRE + kChunk);
  // hooks.tick's timer: the list entry first, so that libwebsockets' pointer finds the window.
  struct Second {
    lws_sorted_usec_list_t sul{};
    Window* window = nullptr;
  } second;
  static void on_second(lws_sorted_usec_list_t* sul);
  // Looks at woken sessions spaced by what the last one took: each session looked at is about a
  // write (a system call and the loopback's or network's work behind it), so with many clients
  // each hearing every frame a look per frame would cost a write per frame per client. Spaced
  // kUsPerSession a session, 1,000 clients are looked at every 50 ms (each write then carries
  // that many ms of frames) and one client at once.
  static constexpr int64_t kUsPerSession = 50;
  struct Pace {
    lws_sorted_usec_list_t sul{};  // first: libwebsockets' pointer finds the window
    Window* window = nullptr;
    bool scheduled = false;
    lws_usec_t last = 0;     // the last look
    lws_usec_t spacing = 0;  // from it to the next
  } pace;
  void wake_paced();
  static void on_pace(lws_sorted_usec_list_t* sul);

  static int callback(lws* wsi, lws_callback_reasons reason, void* user, void* in, size_t len);
  int on_event(lws* wsi, lws_callback_reasons reason, void* in, size_t len);
  Session& session(lws* wsi) {
    auto& s = sessions[wsi];
    if (!s) {
      s = std::make_unique<Session>();
      s->wake->wsi = wsi;
    }
    return *s;
  }
  // As EventLoop's: the sessions are the window's thread's (MAVSWITCH_ASSERT_OWNER).
  void assert_in_loop_thread(const char* what) const noexcept {
    if (owner == std::thread::id() || std::this_thread::get_id() == owner) return;
    std::fprintf(stderr, "mavswitch: %s called off the window's thread\n", what);
    std::abort();
  }
  int answer(lws* wsi, Session& s);
  int await_answer(lws* wsi, Session& s, std::function<void(std::function<void(HttpResponse)>)> awaits);
  int respond(lws* wsi, Session& s, HttpResponse r);
  int write_http(lws* wsi, Session& s);
  // A body streamed to its handler (http_upload.cpp): the request answered at its headers, and
  // each piece of the body as it comes, the client held back while the reader is behind.
  int stream_body(lws* wsi, Session& s, uint64_t length);
  int take_streamed(lws* wsi, Session& s, const void* in, size_t len);
  void resume_streamed(lws* wsi, Session& s);
  void recheck_streamed();  // once a second: no held-back body is forgotten
  int write_stream(lws* wsi, Session& s);
  int send_event(lws* wsi, Session& s);  // an event stream's timer (http_stream.cpp)
  void end_stream(Session& s);
  int refuse_upgrade(lws* wsi, int status, const std::string& why);
  // The Host check and, for a plain request, the one-answer rule; -1/0/1 as the callback
  // returns, or nothing when the request goes on to its handler.
  std::optional<int> refuse_host(lws* wsi, Session& s, bool upgrade);
  int write_frames(lws* wsi, Session& s);
  int write_texts(lws* wsi, Session& s);
  int received_text(lws* wsi, Session& s, const char* in, size_t len);
  void forget(lws* wsi);
};

}  // namespace mavswitch::window
