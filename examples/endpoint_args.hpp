// The one endpoint an example connects through, from its command line:
//   --udp-server PORT          vehicles send to this port on all interfaces
//   --udp-client HOST:PORT     we send to a vehicle (or a router) there
//   --tcp-client HOST:PORT     we connect to a router's or simulator's TCP port
#pragma once

#include <cstdlib>
#include <string>
#include <string_view>

#include "transport/endpoint.hpp"

inline bool parse_endpoint(std::string_view flag, const std::string& value, mavswitch::transport::EndpointSpec& spec) {
  using Kind = mavswitch::transport::EndpointSpec::Kind;
  spec.name = "example";
  if (flag == "--udp-server") {
    spec.kind = Kind::kUdpServer;
    spec.address = "0.0.0.0";
    spec.port = static_cast<uint16_t>(std::stoi(value));
    return true;
  }
  if (flag != "--udp-client" && flag != "--tcp-client") return false;
  spec.kind = flag == "--udp-client" ? Kind::kUdpClient : Kind::kTcpClient;
  const auto colon = value.rfind(':');
  spec.address = value.substr(0, colon);
  spec.port = static_cast<uint16_t>(std::stoi(value.substr(colon + 1)));
  return true;
}
