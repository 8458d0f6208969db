#include "config/endpoint_policy.hpp"

namespace mavswitch::config {

routing::LinkPolicy policy_of(Router& router, EndpointConfig& e, bool create_group) {
  routing::LinkPolicy policy = e.policy;
  if (!e.group.empty()) {
    // Groups are made before routing starts (the workers read them without locks).
    policy.group = create_group ? router.group_index(e.group) : router.routing().find_group(e.group);
    if (policy.group < 0)
      throw ConfigError(e.source + ": Group: '" + e.group + "' is not a group of the running router");
  }
  if (e.signing) policy.signing = std::make_shared<routing::SignatureGate>(e.signing);
  return policy;
}

}  // namespace mavswitch::config
