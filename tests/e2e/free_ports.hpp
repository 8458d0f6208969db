#pragma once

// Ports for the servers a test starts: the router's, nats-server's.

#include <cstddef>
#include <cstdint>
#include <vector>

namespace mavswitch::test {

// A port free on 127.0.0.1 for both UDP and TCP right now, never handed out before in this
// process, and outside the kernel's ephemeral range: a peer's socket bound to port 0 cannot take
// it between the test choosing it and the server binding it.
uint16_t free_udp_port();
uint16_t free_tcp_port();
// n such ports, distinct from one another.
std::vector<uint16_t> free_tcp_ports(size_t n);
// Whether a socket of `type` (SOCK_STREAM, SOCK_DGRAM) can bind 127.0.0.1:port: nothing else
// listens there (a TCP one binds past closed connections' TIME_WAIT, as every server does).
bool port_free(int type, uint16_t port);

}  // namespace mavswitch::test
