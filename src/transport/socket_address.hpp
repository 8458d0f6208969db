// Socket addresses (IPv4 and IPv6) and the "host:port" / "[v6]:port" syntax of configs.
#pragma once

#include <netinet/in.h>
#include <sys/socket.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace mavswitch::transport {

struct HostPort {
  std::string host;  // name or numeric address, without brackets
  uint16_t port = 0;
};

// "host:port", "[v6addr]:port", or with a default port "host" / "[v6addr]". Returns nullopt and
// sets *error on a bad value.
std::optional<HostPort> parse_host_port(std::string_view text, std::optional<uint16_t> default_port,
                                        std::string* error);
std::optional<uint16_t> parse_port(std::string_view text);

class SocketAddress {
 public:
  SocketAddress() = default;
  SocketAddress(const sockaddr* sa, socklen_t len);
  // A numeric IPv4 or IPv6 address; nullopt for a host name.
  static std::optional<SocketAddress> numeric(const std::string& host, uint16_t port);

  const sockaddr* get() const noexcept { return reinterpret_cast<const sockaddr*>(&storage_); }
  sockaddr* get_mut() noexcept { return reinterpret_cast<sockaddr*>(&storage_); }
  socklen_t size() const noexcept { return len_; }
  void set_size(socklen_t len) noexcept { len_ = len; }
  int family() const noexcept { return storage_.ss_family; }
  uint16_t port() const noexcept;
  bool is_broadcast() const noexcept;  // IPv4 limited or directed broadcast (x.x.x.255)
  std::string to_string() const;       // "1.2.3.4:5" or "[::1]:5"
  bool operator==(const SocketAddress& o) const noexcept;
  size_t hash() const noexcept;

 private:
  sockaddr_storage storage_{};
  socklen_t len_ = 0;
};

struct SocketAddressHash {
  size_t operator()(const SocketAddress& a) const noexcept { return a.hash(); }
};

}  // namespace mavswitch::transport
