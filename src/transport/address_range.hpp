// An IPv4 or IPv6 address range in CIDR notation ("192.168.1.0/24", "fd00::/8", or one
// address), for deciding who may connect to a listening endpoint.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "transport/socket_address.hpp"

namespace mavswitch::transport {

class AddressRange {
 public:
  static std::optional<AddressRange> parse(std::string_view text, std::string* error);
  // IPv4 peers seen by a dual-stack socket as ::ffff:a.b.c.d match IPv4 ranges.
  bool contains(const SocketAddress& address) const noexcept;
  bool is_everything() const noexcept { return prefix_ == 0; }
  std::string to_string() const;

 private:
  int family_ = 0;
  uint8_t bytes_[16] = {};
  int prefix_ = 0;
};

}  // namespace mavswitch::transport
