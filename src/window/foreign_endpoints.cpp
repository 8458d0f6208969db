#include "window/foreign_endpoints.hpp"

#include <set>

#include "base/log.hpp"
#include "config/config_keys.hpp"
#include "config/endpoint_policy.hpp"

namespace mavswitch::daemon {

ForeignEndpoints::~ForeignEndpoints() {
  std::lock_guard change(change_mutex_);
  std::map<std::string, Open> fabrics;
  {
    std::lock_guard lock(mutex_);
    fabrics.swap(fabrics_);
  }
}

ForeignEndpoints::Changes ForeignEndpoints::reconcile(std::vector<EndpointConfig>& wanted, bool at_start) {
  std::lock_guard change(change_mutex_);
  Changes changes;
  std::map<std::string, EndpointConfig*> by_name;
  for (auto& e : wanted) by_name[keys::lower(e.spec.name)] = &e;
  std::vector<std::shared_ptr<NatsEndpoint>> closing;
  std::vector<EndpointConfig*> opening;
  std::set<std::string> changed;
  {
    std::lock_guard lock(mutex_);
    for (auto it = fabrics_.begin(); it != fabrics_.end();) {
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
      it = fabrics_.erase(it);
    }
    for (auto& [name, e] : by_name) {
      if (fabrics_.count(name) == 0) opening.push_back(e);
    }
  }
  for (auto& endpoint : closing) log::info("{}: closed", endpoint->name());
  closing.clear();  // the connections end here, outside mutex_
  for (EndpointConfig* e : opening) {
    try {
      std::shared_ptr<NatsEndpoint> endpoint = make_fabric(*e, at_start);
      const std::string name = keys::lower(e->spec.name);
      if (changed.count(name) == 0) ++changes.added;
      std::lock_guard lock(mutex_);
      fabrics_[name] = {std::move(endpoint), e->keys};
    } catch (const std::exception& error) {
      changes.failed.push_back(e->spec.name + ": " + error.what());
      log::error("{}: {}: {}; routing on without it", e->source, e->spec.name, error.what());
    }
  }
  return changes;
}

std::shared_ptr<NatsEndpoint> ForeignEndpoints::make_fabric(EndpointConfig& e, bool at_start) {
  auto policy = std::make_shared<const routing::LinkPolicy>(policy_of(router_, e, at_start));
  auto fabric = std::make_shared<NatsEndpoint>(router_, e, std::move(policy));
  fabric->start();
  return fabric;
}

void ForeignEndpoints::add(EndpointConfig& e) {
  std::lock_guard change(change_mutex_);
  auto endpoint = make_fabric(e, false);
  std::lock_guard lock(mutex_);
  fabrics_[keys::lower(e.spec.name)] = {std::move(endpoint), e.keys};
}

bool ForeignEndpoints::remove(const std::string& name) {
  std::lock_guard change(change_mutex_);
  std::shared_ptr<NatsEndpoint> fabric;
  {
    std::lock_guard lock(mutex_);
    if (const auto f = fabrics_.find(keys::lower(name)); f != fabrics_.end()) {
      fabric = std::move(f->second.endpoint);
      fabrics_.erase(f);
    }
  }
  return fabric != nullptr;  // its connection ends as `fabric` goes
}

bool ForeignEndpoints::has(const std::string& name) const {
  std::lock_guard lock(mutex_);
  return fabrics_.count(keys::lower(name)) != 0;
}

size_t ForeignEndpoints::size() const {
  std::lock_guard lock(mutex_);
  return fabrics_.size();
}

std::vector<EndpointSnapshot> ForeignEndpoints::snapshot() const {
  std::vector<std::shared_ptr<NatsEndpoint>> fabrics;
  {
    std::lock_guard lock(mutex_);
    for (const auto& [name, f] : fabrics_) fabrics.push_back(f.endpoint);
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
  return out;
}

}  // namespace mavswitch::daemon
