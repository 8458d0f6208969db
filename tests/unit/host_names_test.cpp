// Which Host the window answers: literal addresses, loopback names, configured names.
#include <gtest/gtest.h>

#include "window/host_names.hpp"

using mavswitch::window::HostNames;

TEST(HostNames, LiteralAddressesLoopbackNamesAndConfiguredNamesPass) {
  const HostNames hosts({"drone.example"});
  for (const char* host : {"", "127.0.0.1", "127.0.0.1:8080", "10.1.2.3:80", "[::1]:8080", "[fe80::1]", "localhost",
                           "LOCALHOST:8080", "localhost.", "app.localhost", "drone.example", "Drone.Example:8080"})
    EXPECT_TRUE(hosts.allows(host)) << host;
}

TEST(HostNames, AnyOtherNameIsRefused) {
  const HostNames hosts({"drone.example"});
  for (const char* host : {"attacker.example", "attacker.example:8080", "drone.example.attacker.example",
                           "127.0.0.1.nip.io", "localhost.attacker.example", "[::1", "[::1]x", "[not-an-address]",
                           "drone.example:80x", "drone.example:", "127.0.0.1:99999999", "1.2.3"})
    EXPECT_FALSE(hosts.allows(host)) << host;
}
