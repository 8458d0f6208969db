#include "transport/socket_address.hpp"

#include <arpa/inet.h>

#include <charconv>
#include <cstring>

namespace mavswitch::transport {

std::optional<uint16_t> parse_port(std::string_view text) {
  unsigned v = 0;
  auto r = std::from_chars(text.data(), text.data() + text.size(), v);
  if (r.ec != std::errc{} || r.ptr != text.data() + text.size() || v > 65535) return std::nullopt;
  return static_cast<uint16_t>(v);
}

std::optional<HostPort> parse_host_port(std::string_view text, std::optional<uint16_t> default_port,
                                        std::string* error) {
  HostPort hp;
  std::string_view rest;
  if (!text.empty() && text[0] == '[') {
    const auto close = text.find(']');
    if (close == std::string_view::npos) {
      *error = "'" + std::string(text) + "': missing ']' after an IPv6 address";
      return std::nullopt;
    }
    hp.host = std::string(text.substr(1, close - 1));
    rest = text.substr(close + 1);
  } else {
    const auto colon = text.rfind(':');
    if (colon != std::string_view::npos && text.find(':') != colon) {
      *error = "'" + std::string(text) + "': IPv6 addresses go in brackets, as [::1]:14550";
      return std::nullopt;
    }
    hp.host = std::string(text.substr(0, colon));
    rest = colon == std::string_view::npos ? std::string_view{} : text.substr(colon);
  }
  if (hp.host.empty()) {
    *error = "'" + std::string(text) + "': no host";
    return std::nullopt;
  }
  if (rest.empty()) {
    if (!default_port) {
      *error = "'" + std::string(text) + "': no port (host:port)";
      return std::nullopt;
    }
    hp.port = *default_port;
    return hp;
  }
  const auto port = rest[0] == ':' ? parse_port(rest.substr(1)) : std::nullopt;
  if (!port) {
    *error = "'" + std::string(text) + "': bad port";
    return std::nullopt;
  }
  hp.port = *port;
  return hp;
}

SocketAddress::SocketAddress(const sockaddr* sa, socklen_t len) : len_(len) {
  std::memcpy(&storage_, sa, std::min<size_t>(len, sizeof storage_));
}

std::optional<SocketAddress> SocketAddress::numeric(const std::string& host, uint16_t port) {
  SocketAddress a;
  auto* v4 = reinterpret_cast<sockaddr_in*>(&a.storage_);
  if (inet_pton(AF_INET, host.c_str(), &v4->sin_addr) == 1) {
    v4->sin_family = AF_INET;
    v4->sin_port = htons(port);
    a.len_ = sizeof(sockaddr_in);
    return a;
  }
  auto* v6 = reinterpret_cast<sockaddr_in6*>(&a.storage_);
  if (inet_pton(AF_INET6, host.c_str(), &v6->sin6_addr) == 1) {
    v6->sin6_family = AF_INET6;
    v6->sin6_port = htons(port);
    a.len_ = sizeof(sockaddr_in6);
    return a;
  }
  return std::nullopt;
}

uint16_t SocketAddress::port() const noexcept {
  if (family() == AF_INET) return ntohs(reinterpret_cast<const sockaddr_in*>(&storage_)->sin_port);
  if (family() == AF_INET6) return ntohs(reinterpret_cast<const sockaddr_in6*>(&storage_)->sin6_port);
  return 0;
}

bool SocketAddress::is_broadcast() const noexcept {
  if (family() != AF_INET) return false;
  const uint32_t ip = ntohl(reinterpret_cast<const sockaddr_in*>(&storage_)->sin_addr.s_addr);
  return (ip & 0xFF) == 0xFF;
}

std::string SocketAddress::to_string() const {
  char buf[INET6_ADDRSTRLEN] = "?";
  if (family() == AF_INET) {
    inet_ntop(AF_INET, &reinterpret_cast<const sockaddr_in*>(&storage_)->sin_addr, buf, sizeof buf);
    return std::string(buf) + ":" + std::to_string(port());
  }
  if (family() == AF_INET6) {
    inet_ntop(AF_INET6, &reinterpret_cast<const sockaddr_in6*>(&storage_)->sin6_addr, buf, sizeof buf);
    return "[" + std::string(buf) + "]:" + std::to_string(port());
  }
  return "?";
}

bool SocketAddress::operator==(const SocketAddress& o) const noexcept {
  if (family() != o.family()) return false;
  if (family() == AF_INET) {
    const auto* a = reinterpret_cast<const sockaddr_in*>(&storage_);
    const auto* b = reinterpret_cast<const sockaddr_in*>(&o.storage_);
    return a->sin_port == b->sin_port && a->sin_addr.s_addr == b->sin_addr.s_addr;
  }
  if (family() == AF_INET6) {
    const auto* a = reinterpret_cast<const sockaddr_in6*>(&storage_);
    const auto* b = reinterpret_cast<const sockaddr_in6*>(&o.storage_);
    return a->sin6_port == b->sin6_port && std::memcmp(&a->sin6_addr, &b->sin6_addr, sizeof a->sin6_addr) == 0;
  }
  return false;
}

size_t SocketAddress::hash() const noexcept {
  size_t h = static_cast<size_t>(family()) * 1000003u ^ port();
  if (family() == AF_INET) {
    h = h * 31 + reinterpret_cast<const sockaddr_in*>(&storage_)->sin_addr.s_addr;
  } else if (family() == AF_INET6) {
    const auto* b = reinterpret_cast<const uint8_t*>(&reinterpret_cast<const sockaddr_in6*>(&storage_)->sin6_addr);
    for (int i = 0; i < 16; ++i) h = h * 131 + b[i];
  }
  return h;
}

}  // namespace mavswitch::transport
