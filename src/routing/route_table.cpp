#include "routing/route_table.hpp"

#include <algorithm>

namespace mavswitch::routing {
namespace {

const std::vector<RouteTable::Entry> kNone;

void touch(std::vector<RouteTable::Entry>& entries, LinkId link, Millis now) {
  for (auto& e : entries) {
    if (e.link == link) {
      e.last_heard = now;
      return;
    }
  }
  entries.push_back({link, now});
}

template <class Pred>
size_t erase_if(std::vector<RouteTable::Entry>& entries, Pred pred) {
  const auto before = entries.size();
  entries.erase(std::remove_if(entries.begin(), entries.end(), pred), entries.end());
  return before - entries.size();
}

}  // namespace

void RouteTable::learn(uint8_t sysid, uint8_t compid, LinkId link, Millis now) {
  auto& sys = systems_[sysid];
  if (!sys) sys = std::make_unique<System>();
  touch(sys->components[compid], link, now);
  touch(sys->any, link, now);
}

const std::vector<RouteTable::Entry>& RouteTable::component_links(uint8_t sysid, uint8_t compid) const noexcept {
  const auto& sys = systems_[sysid];
  return sys ? sys->components[compid] : kNone;
}

const std::vector<RouteTable::Entry>& RouteTable::system_links(uint8_t sysid) const noexcept {
  const auto& sys = systems_[sysid];
  return sys ? sys->any : kNone;
}

bool RouteTable::heard_on(uint8_t sysid, uint8_t compid, LinkId link) const noexcept {
  for (const auto& e : component_links(sysid, compid)) {
    if (e.link == link) return true;
  }
  return false;
}

void RouteTable::forget_link(LinkId link) {
  for (auto& sys : systems_) {
    if (!sys) continue;
    for (auto& comp : sys->components) erase_if(comp, [&](const Entry& e) { return e.link == link; });
    erase_if(sys->any, [&](const Entry& e) { return e.link == link; });
  }
}

void RouteTable::forget_system(uint8_t sysid) { systems_[sysid].reset(); }

size_t RouteTable::expire(Millis cutoff) {
  size_t dropped = 0;
  for (auto& sys : systems_) {
    if (!sys) continue;
    for (auto& comp : sys->components) dropped += erase_if(comp, [&](const Entry& e) { return e.last_heard < cutoff; });
    erase_if(sys->any, [&](const Entry& e) { return e.last_heard < cutoff; });
    if (sys->any.empty()) sys.reset();
  }
  return dropped;
}

}  // namespace mavswitch::routing
