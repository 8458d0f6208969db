// The fleet fabric's subjects (PREFIX: the endpoint's Prefix, "mavlink" by default):
//   PREFIX.from.SYS.COMP.MSG  a frame without a target, from source SYS/COMP (MSG: its name in
//                             the dialect, or its id), e.g. mavlink.from.1.1.HEARTBEAT
//   PREFIX.to.SYS.COMP.MSG    a frame for target system SYS (component COMP, 0: all)
// A cloud consumer takes one vehicle (from.7.>), one message (from.*.*.ATTITUDE) or a mix.
// A router that serves a named vehicle (Vehicle = NAME) puts the name after the prefix:
//   PREFIX.NAME.from.SYS.COMP.MSG and PREFIX.NAME.to.SYS.COMP.MSG
// so the functions below take the subjects' root (PREFIX, or PREFIX.NAME) as `prefix`.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "protocol/frame.hpp"

namespace mavswitch::fabric {

// Writes the subject `frame` goes out on into `out` (its storage reused: no allocation per frame).
void fabric_subject(std::string& out, std::string_view prefix, const protocol::FrameView& frame);
// What a router subscribes to for a system behind it: PREFIX.to.SYS.>
std::string interest_subject(std::string_view prefix, uint8_t system);
// Whether some subject matches both `a` and `b`, each a subject or a pattern with NATS'
// wildcards ("*" one token, ">" one or more at the end). A subject matches a pattern when they
// intersect.
bool subjects_intersect(std::string_view a, std::string_view b);

}  // namespace mavswitch::fabric
