#include "transport/endpoint.hpp"

#include <unistd.h>

#include <stdexcept>

#include "transport/endpoint_kinds.hpp"

namespace mavswitch::transport {

const char* kind_name(const EndpointSpec& spec) noexcept {
  switch (spec.kind) {
    case EndpointSpec::Kind::kSerial: return "serial";
    case EndpointSpec::Kind::kUdpServer: return "udp-server";
    case EndpointSpec::Kind::kUdpClient: return "udp-client";
    case EndpointSpec::Kind::kTcpServer: return "tcp-server";
    case EndpointSpec::Kind::kTcpClient: return "tcp-client";
    case EndpointSpec::Kind::kMade: return spec.maker != nullptr ? spec.maker->kind() : "made";
  }
  return "?";
}

std::string Endpoint::describe() const {
  std::string where = spec_.maker != nullptr ? spec_.maker->where(spec_)
                      : spec_.kind == EndpointSpec::Kind::kSerial
                          ? spec_.device
                          : (spec_.address.find(':') != std::string::npos ? "[" + spec_.address + "]" : spec_.address) +
                                ":" + std::to_string(spec_.port);
  return std::string(kind_name(spec_)) + " " + spec_.name + (where.empty() ? "" : " " + where);
}

bool Endpoint::admits(const SocketAddress& peer) {
  if (spec_.allow_from.empty()) return true;
  for (const auto& range : spec_.allow_from) {
    if (range.contains(peer)) return true;
  }
  ++refused_;
  return false;
}

void Endpoint::join_group(std::shared_ptr<ListenerGroup> group, size_t slot) {
  group_ = std::move(group);
  group_slot_ = slot;
}

ListenerGroup::~ListenerGroup() {
  for (auto& s : sockets) {
    // relaxed: destruction; no other thread can hold it any more.
    if (const int fd = s.load(std::memory_order_relaxed); fd >= 0) ::close(fd);
  }
}

bool Endpoint::peer_cap_reached() const noexcept {
  const auto& count = group_ ? group_->peers : peers_;
  // relaxed: a peer count compared with a cap; a race admits one peer more or less, nothing else.
  return count.load(std::memory_order_relaxed) >= spec_.max_peers;
}

void Endpoint::peer_added() noexcept { (group_ ? group_->peers : peers_).fetch_add(1, std::memory_order_relaxed); }
void Endpoint::peer_removed() noexcept { (group_ ? group_->peers : peers_).fetch_sub(1, std::memory_order_relaxed); }

std::unique_ptr<Endpoint> make_endpoint(EndpointSpec spec, LinkHost& host) {
  switch (spec.kind) {
    case EndpointSpec::Kind::kSerial: return make_serial_endpoint(std::move(spec), host);
    case EndpointSpec::Kind::kUdpServer: return make_udp_server_endpoint(std::move(spec), host);
    case EndpointSpec::Kind::kUdpClient: return make_udp_client_endpoint(std::move(spec), host);
    case EndpointSpec::Kind::kTcpServer: return make_tcp_server_endpoint(std::move(spec), host);
    case EndpointSpec::Kind::kTcpClient: return make_tcp_client_endpoint(std::move(spec), host);
    case EndpointSpec::Kind::kMade:
      if (spec.maker == nullptr) throw std::runtime_error(spec.name + ": nothing makes this kind of endpoint");
      return spec.maker->make(std::move(spec), host);
  }
  return nullptr;
}

}  // namespace mavswitch::transport
