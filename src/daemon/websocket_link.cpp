#include "daemon/websocket_link.hpp"

#include <civetweb.h>

#include <algorithm>

#include "base/log.hpp"

namespace mavswitch::daemon {

// One connected client: a LocalLink on the router's thread, its input handed over from
// civetweb's thread, its output written by a thread of its own.
class WebSocketClient final : public LocalLink, public std::enable_shared_from_this<WebSocketClient> {
 public:
  WebSocketClient(Router& router, mg_connection* conn, std::string name)
      : router_(router), conn_(conn), name_(std::move(name)), parser_(router.routing_table()) {}

  void start(std::shared_ptr<const routing::LinkPolicy> policy) {
    router_.run_on_loop([&] { id_ = router_.attach_local(*this, std::move(policy)); });
    writer_ = std::thread([self = shared_from_this()] { self->write_loop(); });
  }

  // civetweb's thread: the bytes wait for the router's thread, which is told once per batch.
  void received(std::span<const uint8_t> message) {
    bool post = false;
    {
      std::lock_guard lock(mutex_);
      if (input_.size() + message.size() > WebSocketEndpoint::kMaxPendingInput) {
        ++input_dropped_;
        return;
      }
      input_.insert(input_.end(), message.begin(), message.end());
      post = !drain_posted_;
      drain_posted_ = true;
    }
    if (post) router_.event_loop().post([self = shared_from_this()] { self->route_input(); });
  }

  // The router's thread: a frame for the client, queued for its writer (full: dropped, counted).
  void deliver(const protocol::FrameView&, std::span<const uint8_t> bytes) override {
    {
      std::lock_guard lock(mutex_);
      if (closing_ || output_.size() >= WebSocketEndpoint::kMaxQueuedFrames) {
        ++counters_.dropped_queue_full;
        return;
      }
      output_.emplace_back(bytes.begin(), bytes.end());
      queued_bytes_ += bytes.size();
    }
    wake_.notify_one();
  }

  // civetweb's thread, as the connection ends: the link goes, the writer stops.
  void close() {
    {
      std::lock_guard lock(mutex_);
      closing_ = true;
    }
    wake_.notify_one();
    if (writer_.joinable()) writer_.join();
    try {
      router_.run_on_loop([&] {
        router_.detach_local(id_);
        id_ = routing::kNoLink;  // input still posted finds no link to come from
      });
    } catch (const Router::Stopped&) {  // the router is going anyway
    }
  }

  WebSocketClientReport report() const {
    std::lock_guard lock(mutex_);
    WebSocketClientReport r{name_, counters_, parser_stats_, queued_bytes_};
    r.counters.dropped_queue_full += input_dropped_;
    return r;
  }
  mg_connection* connection() const noexcept { return conn_; }

 private:
  // The router's thread: parse what arrived and route each frame as if a wire link read it.
  void route_input() {
    std::vector<uint8_t> bytes;
    {
      std::lock_guard lock(mutex_);
      bytes.swap(input_);
      drain_posted_ = false;
    }
    if (id_ == routing::kNoLink) return;
    uint64_t frames = 0;
    parser_.feed(bytes, [&](const protocol::FrameView& f) {
      ++frames;
      router_.route_local(id_, f);
    });
    std::lock_guard lock(mutex_);
    counters_.frames_in += frames;
    counters_.bytes_in += bytes.size();
    parser_stats_ = parser_.stats();
  }

  void write_loop() {
    std::unique_lock lock(mutex_);
    for (;;) {
      wake_.wait(lock, [&] { return closing_ || !output_.empty(); });
      if (closing_) return;
      std::deque<std::vector<uint8_t>> batch;
      batch.swap(output_);
      queued_bytes_ = 0;
      lock.unlock();
      uint64_t frames = 0, bytes = 0;
      bool failed = false;
      for (const auto& f : batch) {  // one frame a message: what ground stations expect
        if (mg_websocket_write(conn_, MG_WEBSOCKET_OPCODE_BINARY, reinterpret_cast<const char*>(f.data()), f.size()) <=
            0) {
          failed = true;
          break;
        }
        ++frames;
        bytes += f.size();
      }
      lock.lock();
      counters_.frames_out += frames;
      counters_.bytes_out += bytes;
      if (failed) return;  // the connection is ending: close() follows from civetweb
    }
  }

  Router& router_;
  mg_connection* const conn_;
  const std::string name_;
  routing::LinkId id_ = routing::kNoLink;
  protocol::FrameParser parser_;  // the router's thread
  mutable std::mutex mutex_;
  std::condition_variable wake_;
  std::vector<uint8_t> input_;               // under mutex_
  bool drain_posted_ = false;                // under mutex_
  std::deque<std::vector<uint8_t>> output_;  // under mutex_
  size_t queued_bytes_ = 0;                  // under mutex_
  bool closing_ = false;                     // under mutex_
  uint64_t input_dropped_ = 0;               // under mutex_
  transport::LinkCounters counters_;         // under mutex_
  protocol::ParserStats parser_stats_;       // under mutex_
  std::thread writer_;
};

WebSocketEndpoint::WebSocketEndpoint(Router& router, std::string name, std::string path,
                                     std::shared_ptr<const routing::LinkPolicy> policy, size_t max_clients)
    : router_(router),
      name_(std::move(name)),
      path_(std::move(path)),
      policy_(std::move(policy)),
      max_clients_(max_clients) {}

WebSocketEndpoint::~WebSocketEndpoint() {
  std::vector<std::shared_ptr<WebSocketClient>> left;
  {
    std::lock_guard lock(mutex_);
    left.swap(clients_);
  }
  for (auto& c : left) c->close();
}

bool WebSocketEndpoint::opened(mg_connection* conn, const std::string& peer) {
  std::shared_ptr<WebSocketClient> client;
  {
    std::lock_guard lock(mutex_);
    if (clients_.size() >= max_clients_) {
      ++refused_;
      log::warning("websocket {}: client {} refused: MaxClients ({}) reached", name_, peer, max_clients_);
      return false;
    }
    client = std::make_shared<WebSocketClient>(router_, conn, name_ + " " + peer);
    clients_.push_back(client);
  }
  try {
    client->start(policy_);
  } catch (const Router::Stopped&) {
    return false;
  }
  log::info("websocket {}: client {} connected", name_, peer);
  return true;
}

std::shared_ptr<WebSocketClient> WebSocketEndpoint::client_of(const mg_connection* conn, bool forget) {
  std::lock_guard lock(mutex_);
  const auto it =
      std::find_if(clients_.begin(), clients_.end(), [&](const auto& c) { return c->connection() == conn; });
  if (it == clients_.end()) return nullptr;
  auto client = *it;
  if (forget) clients_.erase(it);
  return client;
}

void WebSocketEndpoint::received(mg_connection* conn, std::span<const uint8_t> message) {
  if (const auto client = client_of(conn, false)) client->received(message);
}

void WebSocketEndpoint::closed(const mg_connection* conn) {
  const auto client = client_of(conn, true);
  if (!client) return;
  client->close();
  const WebSocketClientReport last = client->report();
  log::info("websocket {}: client {} gone", name_, last.name);
  std::lock_guard lock(mutex_);
  gone_.counters += last.counters;
  gone_.parser += last.parser;
}

WebSocketClientReport WebSocketEndpoint::totals() const {
  std::lock_guard lock(mutex_);
  WebSocketClientReport sum = gone_;
  sum.name = name_;
  for (const auto& c : clients_) {
    const WebSocketClientReport r = c->report();
    sum.counters += r.counters;
    sum.parser += r.parser;
    sum.queued_bytes += r.queued_bytes;
  }
  return sum;
}

std::vector<WebSocketClientReport> WebSocketEndpoint::clients() const {
  std::lock_guard lock(mutex_);
  std::vector<WebSocketClientReport> out;
  for (const auto& c : clients_) out.push_back(c->report());
  return out;
}

}  // namespace mavswitch::daemon
