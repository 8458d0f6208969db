// The link kinds, one file each; endpoint.cpp picks one by EndpointSpec::Kind.
#pragma once

#include <memory>

#include "transport/endpoint.hpp"

namespace mavswitch::transport {

std::unique_ptr<Endpoint> make_serial_endpoint(EndpointSpec spec, LinkHost& host);
std::unique_ptr<Endpoint> make_udp_server_endpoint(EndpointSpec spec, LinkHost& host);
std::unique_ptr<Endpoint> make_udp_client_endpoint(EndpointSpec spec, LinkHost& host);
std::unique_ptr<Endpoint> make_tcp_server_endpoint(EndpointSpec spec, LinkHost& host);
std::unique_ptr<Endpoint> make_tcp_client_endpoint(EndpointSpec spec, LinkHost& host);

}  // namespace mavswitch::transport
