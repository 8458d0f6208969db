#include "window/websocket_link.hpp"

#include <algorithm>

#include "base/log.hpp"

namespace mavswitch::daemon {

WebSocketEndpoint::WebSocketEndpoint(Router& router, std::string name, std::string path,
                                     std::shared_ptr<const routing::LinkPolicy> policy, size_t max_clients)
    : router_(router),
      name_(std::move(name)),
      path_(std::move(path)),
      policy_(std::move(policy)),
      max_clients_(max_clients) {}

WebSocketEndpoint::~WebSocketEndpoint() { close_all(); }

void WebSocketEndpoint::close_all() {
  std::vector<std::shared_ptr<ForeignLink>> left;
  {
    std::lock_guard lock(mutex_);
    closing_ = true;
    left = clients_;
  }
  for (auto& c : left) c->close();
}

bool WebSocketEndpoint::has_room() {
  std::lock_guard lock(mutex_);
  if (closing_) return false;
  if (clients_.size() < max_clients_) return true;
  ++refused_;
  log::warning("websocket {}: a client refused: MaxClients ({}) reached", name_, max_clients_);
  return false;
}

std::shared_ptr<ForeignLink> WebSocketEndpoint::open(const std::string& peer, std::function<void()> wake) {
  auto client = std::make_shared<ForeignLink>(router_, name_ + " " + peer, kMaxQueuedFrames, std::move(wake));
  {
    std::lock_guard lock(mutex_);
    if (closing_ || clients_.size() >= max_clients_) {  // the room has_room() saw went to another
      ++refused_;
      return nullptr;
    }
    clients_.push_back(client);
  }
  try {
    client->start(policy_);
  } catch (const Router::Stopped&) {
    close(client);
    return nullptr;
  }
  log::info("websocket {}: client {} connected", name_, peer);
  return client;
}

void WebSocketEndpoint::close(const std::shared_ptr<ForeignLink>& client) {
  client->close();
  const ForeignLinkReport last = client->report();
  std::lock_guard lock(mutex_);
  const auto it = std::find(clients_.begin(), clients_.end(), client);
  if (it == clients_.end()) return;
  clients_.erase(it);
  gone_.counters += last.counters;
  gone_.parser += last.parser;
  log::info("websocket {}: client {} gone", name_, last.name.substr(name_.size() + 1));
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
  out.reserve(clients_.size());
  for (const auto& c : clients_) out.push_back(c->report());
  return out;
}

}  // namespace mavswitch::daemon
