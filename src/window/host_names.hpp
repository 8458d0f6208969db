// Which Host a request may name: the defence against DNS rebinding. A page on a name the
// attacker controls can be made to reach 127.0.0.1, but its requests still say the attacker's
// name in Host. So the window answers only requests that name a literal address (which no
// rebinding can stand behind), a loopback name, or a name the operator configured (ServerName).
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace mavswitch::window {

class HostNames {
 public:
  explicit HostNames(std::vector<std::string> configured) : configured_(std::move(configured)) {}
  // `host` as the Host header gives it ("name", "name:port", "[::1]:8080"). An absent Host
  // (HTTP/1.0, never a browser) passes.
  bool allows(std::string_view host) const;

 private:
  std::vector<std::string> configured_;  // lower case
};

}  // namespace mavswitch::window
