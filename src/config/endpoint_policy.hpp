// What an endpoint's links follow, from its configuration, in the running router's terms.
#pragma once

#include "config/config.hpp"
#include "router/router.hpp"

namespace mavswitch::config {

// Its group (one the configuration made at start, when `create_group` is false) and its signing
// gate. Throws ConfigError for a group the router does not have.
routing::LinkPolicy policy_of(Router& router, EndpointConfig& e, bool create_group);

}  // namespace mavswitch::config
