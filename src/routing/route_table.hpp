// Which links each (system, component) was heard on, and when. Lookups by system or by
// (system, component) are direct array indexing; per-system storage exists only for systems
// actually heard, so an idle router holds almost nothing.
#pragma once

#include <array>
#include <memory>
#include <vector>

#include "routing/types.hpp"

namespace mavswitch::routing {

class RouteTable {
 public:
  struct Entry {
    LinkId link;
    Millis last_heard;
  };

  // Records that (sysid, compid) was heard on link at now. Allocates only the first time a
  // system, or a (component, link) pair, is seen.
  void learn(uint8_t sysid, uint8_t compid, LinkId link, Millis now);

  // Links where this exact component was heard.
  const std::vector<Entry>& component_links(uint8_t sysid, uint8_t compid) const noexcept;
  // Links where any component of this system was heard.
  const std::vector<Entry>& system_links(uint8_t sysid) const noexcept;
  bool heard_on(uint8_t sysid, uint8_t compid, LinkId link) const noexcept;

  void forget_link(LinkId link);
  void forget_system(uint8_t sysid);
  // Drops every entry last heard before `cutoff`; returns how many went.
  size_t expire(Millis cutoff);

 private:
  struct System {
    std::array<std::vector<Entry>, 256> components;
    std::vector<Entry> any;  // per link: the latest of its components
  };
  std::array<std::unique_ptr<System>, 256> systems_;
};

}  // namespace mavswitch::routing
