// Small vocabulary shared by the routing layer and the layers above it.
#pragma once

#include <cstdint>

namespace mavswitch::routing {

// A link is one peer to route to: a serial port, a UDP client, one UDP server peer, one TCP
// connection. Ids are small and reused after a link goes away.
using LinkId = uint32_t;
inline constexpr LinkId kNoLink = 0xFFFFFFFF;

// Monotonic milliseconds, supplied by the caller.
using Millis = int64_t;

}  // namespace mavswitch::routing
