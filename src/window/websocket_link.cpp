#include "window/websocket_link.hpp"

#include <civetweb.h>

#include <algorithm>

#include "base/log.hpp"

namespace mavswitch::daemon {

// One connected client: its output is one WebSocket message a frame (what ground stations
// expect).
class WebSocketClient final : public ForeignLink {
 public:
  WebSocketClient(Router& router, mg_connection* conn, std::string name)
      : ForeignLink(router, std::move(name), WebSocketEndpoint::kMaxQueuedFrames), conn_(conn) {}
  mg_connection* connection() const noexcept { return conn_; }

 private:
  Written write(std::span<const uint8_t> frame) override {
    const int n = mg_websocket_write(conn_, MG_WEBSOCKET_OPCODE_BINARY, reinterpret_cast<const char*>(frame.data()),
                                     frame.size());
    return n > 0 ? Written::kSent : Written::kGone;
  }
  mg_connection* const conn_;
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
  const ForeignLinkReport last = client->report();
  log::info("websocket {}: client {} gone", name_, last.name);
  std::lock_guard lock(mutex_);
  gone_.counters += last.counters;
  gone_.parser += last.parser;
}

ForeignLinkReport WebSocketEndpoint::totals() const {
  std::lock_guard lock(mutex_);
  ForeignLinkReport sum = gone_;
  sum.name = name_;
  for (const auto& c : clients_) {
    const ForeignLinkReport r = c->report();
    sum.counters += r.counters;
    sum.parser += r.parser;
    sum.queued_bytes += r.queued_bytes;
  }
  return sum;
}

std::vector<ForeignLinkReport> WebSocketEndpoint::clients() const {
  std::lock_guard lock(mutex_);
  std::vector<ForeignLinkReport> out;
  for (const auto& c : clients_) out.push_back(c->report());
  return out;
}

}  // namespace mavswitch::daemon
