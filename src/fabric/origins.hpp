// A fabric router's origin: the reply subject of everything it publishes. PREFIX.origin.BEGAN-ID
// says which router sent a message and when that router began (the earlier of two routers
// sending as one vehicle keeps the name); on from-subjects ".N" follows, the router's count of
// what it published there, so a receiver counts what never came and drops what came late.
#pragma once

#include <cstdint>
#include <string_view>

namespace mavswitch::fabric {

// A message's reply subject: its router's origin (PREFIX.origin.BEGAN-ID), and the count that
// router gave it (its from-subjects' messages: PREFIX.origin.BEGAN-ID.N), or 0.
struct OriginParts {
  std::string_view id;
  uint64_t count = 0;
};
OriginParts origin_parts(std::string_view reply);

// Whether the router of origin `a` began before the one of origin `b` (both mavswitchd's
// origins, PREFIX.origin.BEGAN-ID); false when either is not one.
bool began_before(std::string_view a, std::string_view b);

}  // namespace mavswitch::fabric
