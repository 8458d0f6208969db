// Each endpoint section type: the kind it makes, its keys, and what is particular to it.
#include <string>

#include "config/config_keys.hpp"

namespace mavswitch::config::keys {

namespace {

// A WebSocket endpoint is a path on the HTTP server, not a socket of its own.
void name_websocket(const Where& w, const std::string& name, EndpointConfig& e) {
  if (name.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_") != std::string::npos)
    w.fail("a WebSocket endpoint's name is letters, digits, '-' and '_' (it is in its path)");
  if (e.path.empty()) e.path = "/mavlink/" + name;
}

// As mavlink-router: a UDP section says its mode, there is no default to guess.
void check_udp(const std::string&, const EndpointConfig& e) {
  if (!e.mode_set)
    throw ConfigError(e.source + ": Mode: required (Normal, a client, or Server) in [UdpEndpoint " + e.spec.name + "]");
}

}  // namespace

const SectionType* section_type(std::string_view name) {
  using K = transport::EndpointSpec::Kind;  // not Kind: config_keys.cpp's, in a unity build
  // UDP's Mode may change the kind it makes (a server).
  static const SectionType kTypes[] = {
      {"uartendpoint", K::kSerial, uart_keys, true, nullptr, nullptr},
      {"udpendpoint", K::kUdpClient, udp_keys, true, nullptr, check_udp},
      {"tcpendpoint", K::kTcpClient, tcp_keys, true, nullptr, nullptr},
      {"tcpserverendpoint", K::kTcpServer, tcp_server_keys, true, nullptr, nullptr},
      {"websocketendpoint", K::kMade, websocket_keys, false, name_websocket, nullptr},
      kNatsSection,
  };
  for (const SectionType& t : kTypes) {
    if (name == t.name) return &t;
  }
  return nullptr;
}

}  // namespace mavswitch::config::keys
