#include "window/foreign_endpoints.hpp"

#include <set>

#include "base/log.hpp"
#include "config/config_keys.hpp"
#include "config/endpoint_policy.hpp"

namespace mavswitch::daemon {

ForeignEndpoints::~ForeignEndpoints() {
  std::lock_guard change(change_mutex_);
  std::map<std::string, Open<WebSocketEndpoint>> websockets;
  std::map<std::string, Open<NatsEndpoint>> fabrics;
  {
    std::lock_guard lock(mutex_);
    websockets.swap(websockets_);
    fabrics.swap(fabrics_);
  }
  for (auto& [name, w] : websockets) w.endpoint->close_all();
}

template <typename T, typename Make, typename Close>
void ForeignEndpoints::reconcile_kind(std::map<std::string, Open<T>>& open, std::vector<EndpointConfig>& wanted,
                                      const Make& make, const Close& close, Changes& changes) {
  std::map<std::string, EndpointConfig*> by_name;
  for (auto& e : wanted) by_name[keys::lower(e.spec.name)] = &e;
  std::vector<std::shared_ptr<T>> closing;
  std::vector<EndpointConfig*> opening;
  std::set<std::string> changed;
  {
    std::lock_guard lock(mutex_);
    for (auto it = open.begin(); it != open.end();) {
      const auto w = by_name.find(it->first);
      if (w != by_name.end() && w->second->keys == it->second.keys) {
        ++it;
        continue;
      }
      if (w == by_name.end()) {
        ++changes.removed;
      } else {
        ++changes.changed;
        changed.insert(it->first);
      }
      closing.push_back(std::move(it->second.endpoint));
      it = open.erase(it);
    }
    for (auto& [name, e] : by_name) {
      if (open.count(name) == 0) opening.push_back(e);
    }
  }
  for (auto& endpoint : closing) {
    close(*endpoint);
    log::info("{}: closed", endpoint->name());
  }
  closing.clear();  // a NATS endpoint's connection ends here
  for (EndpointConfig* e : opening) {
    try {
      std::shared_ptr<T> endpoint = make(*e);
      const std::string name = keys::lower(e->spec.name);
      if (changed.count(name) == 0) ++changes.added;
      std::lock_guard lock(mutex_);
      open[name] = {std::move(endpoint), e->keys};
    } catch (const std::exception& error) {
      changes.failed.push_back(e->spec.name + ": " + error.what());
      log::error("{}: {}: {}; routing on without it", e->source, e->spec.name, error.what());
    }
  }
}

ForeignEndpoints::Changes ForeignEndpoints::reconcile(std::vector<EndpointConfig>& websockets,
                                                      std::vector<EndpointConfig>& fabrics, bool websockets_served,
                                                      bool at_start) {
  std::lock_guard change(change_mutex_);
  Changes changes;
  std::vector<EndpointConfig> none;
  reconcile_kind(
      websockets_, websockets_served ? websockets : none,
      [&](EndpointConfig& e) { return make_websocket(e, at_start); }, [&](WebSocketEndpoint& w) { close_websocket(w); },
      changes);
  if (!websockets_served && !websockets.empty())
    log::warning("[WebSocketEndpoint] sections need the HTTP server ([Http] Port = 0)");
  reconcile_kind(
      fabrics_, fabrics, [&](EndpointConfig& e) { return make_fabric(e, at_start); }, [](NatsEndpoint&) {}, changes);
  return changes;
}

std::shared_ptr<WebSocketEndpoint> ForeignEndpoints::make_websocket(EndpointConfig& e, bool at_start) {
  auto policy = std::make_shared<const routing::LinkPolicy>(policy_of(router_, e, at_start));
  return std::make_shared<WebSocketEndpoint>(router_, e.spec.name, e.websocket_path, std::move(policy),
                                             e.spec.max_peers);
}

std::shared_ptr<NatsEndpoint> ForeignEndpoints::make_fabric(EndpointConfig& e, bool at_start) {
  auto policy = std::make_shared<const routing::LinkPolicy>(policy_of(router_, e, at_start));
  auto fabric = std::make_shared<NatsEndpoint>(router_, e, std::move(policy));
  fabric->start();
  return fabric;
}

void ForeignEndpoints::close_websocket(WebSocketEndpoint& w) {
  w.close_all();
  std::function<void()> wake;
  {
    std::lock_guard lock(mutex_);
    wake = wake_;
  }
  if (wake) wake();  // the HTTP server hangs up on its clients
}

void ForeignEndpoints::add(EndpointConfig& e, bool websocket) {
  std::lock_guard change(change_mutex_);
  const std::string name = keys::lower(e.spec.name);
  if (websocket) {
    {
      std::lock_guard lock(mutex_);
      for (const auto& [other, w] : websockets_) {
        if (w.endpoint->path() == e.websocket_path)
          throw std::runtime_error("the WebSocket endpoint '" + w.endpoint->name() + "' serves " + e.websocket_path);
      }
    }
    auto endpoint = make_websocket(e, false);
    std::lock_guard lock(mutex_);
    websockets_[name] = {std::move(endpoint), e.keys};
  } else {
    auto endpoint = make_fabric(e, false);
    std::lock_guard lock(mutex_);
    fabrics_[name] = {std::move(endpoint), e.keys};
  }
}

bool ForeignEndpoints::remove(const std::string& name) {
  std::lock_guard change(change_mutex_);
  std::shared_ptr<WebSocketEndpoint> websocket;
  std::shared_ptr<NatsEndpoint> fabric;
  {
    std::lock_guard lock(mutex_);
    if (const auto it = websockets_.find(keys::lower(name)); it != websockets_.end()) {
      websocket = std::move(it->second.endpoint);
      websockets_.erase(it);
    } else if (const auto f = fabrics_.find(keys::lower(name)); f != fabrics_.end()) {
      fabric = std::move(f->second.endpoint);
      fabrics_.erase(f);
    }
  }
  if (websocket) close_websocket(*websocket);
  return websocket || fabric;  // a NATS endpoint's connection ends as `fabric` goes
}

bool ForeignEndpoints::has(const std::string& name) const {
  std::lock_guard lock(mutex_);
  return websockets_.count(keys::lower(name)) != 0 || fabrics_.count(keys::lower(name)) != 0;
}

std::shared_ptr<WebSocketEndpoint> ForeignEndpoints::websocket_at(const std::string& path) const {
  std::lock_guard lock(mutex_);
  for (const auto& [name, w] : websockets_) {
    if (w.endpoint->path() == path) return w.endpoint;
  }
  return nullptr;
}

std::vector<std::pair<std::string, std::string>> ForeignEndpoints::websocket_paths() const {
  std::lock_guard lock(mutex_);
  std::vector<std::pair<std::string, std::string>> paths;
  for (const auto& [name, w] : websockets_) paths.emplace_back(w.endpoint->name(), w.endpoint->path());
  return paths;
}

void ForeignEndpoints::on_clients_closed(std::function<void()> wake) {
  std::lock_guard lock(mutex_);
  wake_ = std::move(wake);
}

size_t ForeignEndpoints::size() const {
  std::lock_guard lock(mutex_);
  return websockets_.size() + fabrics_.size();
}

std::vector<EndpointSnapshot> ForeignEndpoints::snapshot() const {
  std::vector<std::shared_ptr<NatsEndpoint>> fabrics;
  std::vector<std::shared_ptr<WebSocketEndpoint>> websockets;
  {
    std::lock_guard lock(mutex_);
    for (const auto& [name, f] : fabrics_) fabrics.push_back(f.endpoint);
    for (const auto& [name, w] : websockets_) websockets.push_back(w.endpoint);
  }
  std::vector<EndpointSnapshot> out;
  for (const auto& f : fabrics) {
    EndpointSnapshot e;
    e.name = f->name();
    e.kind = "nats";
    e.description = f->description();
    const FabricLink::Report r = f->report();
    e.totals.counters = r.counters;
    e.totals.parser = r.parser;
    e.sequence_lost = r.sequence_lost;
    e.links.push_back({f->name(), f->server(), 0, r.counters, r.parser, r.sequence_lost, 0, r.queued_bytes});
    out.push_back(std::move(e));
  }
  for (const auto& w : websockets) {
    EndpointSnapshot e;
    e.name = w->name();
    e.kind = "websocket";
    e.description = "websocket " + w->name() + " " + w->path();
    const ForeignLinkReport total = w->totals();
    e.totals.counters = total.counters;
    e.totals.parser = total.parser;
    for (const auto& c : w->clients())
      e.links.push_back({c.name, c.name.substr(c.name.find(' ') + 1), 0, c.counters, c.parser, 0, 0, c.queued_bytes});
    out.push_back(std::move(e));
  }
  return out;
}

}  // namespace mavswitch::daemon
