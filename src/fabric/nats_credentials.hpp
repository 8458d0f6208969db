// Who the router is to the cluster: a user and password, a token, a .creds file, an NKey, and
// TLS (the servers' CA, the router's own certificate), set on libnats' options.
#pragma once

#include "config/config.hpp"

struct __natsOptions;

namespace mavswitch::fabric {

// Throws std::runtime_error naming the key for a file that cannot be read or a setting libnats
// refuses: said at start, not when a server first answers.
void set_credentials(__natsOptions* options, const config::NatsSettings& settings);

}  // namespace mavswitch::fabric
