// libnats answers with a status; setting up a connection stops at the first refusal, named.
#pragma once

#include <nats/nats.h>

#include <stdexcept>
#include <string>

namespace mavswitch::fabric {

inline void check(natsStatus s, const std::string& what) {
  if (s != NATS_OK) throw std::runtime_error(what + ": " + natsStatus_GetText(s));
}

}  // namespace mavswitch::fabric
