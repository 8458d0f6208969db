#include "transport/address_range.hpp"

#include <arpa/inet.h>

#include <charconv>
#include <cstddef>
#include <cstring>

namespace mavswitch::transport {

std::optional<AddressRange> AddressRange::parse(std::string_view text, std::string* error) {
  AddressRange r;
  const auto slash = text.find('/');
  std::string host(text.substr(0, slash));
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
  if (inet_pton(AF_INET, host.c_str(), r.bytes_) == 1) {
    r.family_ = AF_INET;
    r.prefix_ = 32;
  } else if (inet_pton(AF_INET6, host.c_str(), r.bytes_) == 1) {
    r.family_ = AF_INET6;
    r.prefix_ = 128;
  } else {
    *error = "'" + std::string(text) + "' is not an address or address/prefix";
    return std::nullopt;
  }
  if (slash != std::string_view::npos) {
    const std::string_view p = text.substr(slash + 1);
    int prefix = -1;
    auto res = std::from_chars(p.data(), p.data() + p.size(), prefix);
    if (res.ec != std::errc{} || res.ptr != p.data() + p.size() || prefix < 0 || prefix > r.prefix_) {
      *error = "'" + std::string(text) + "': bad prefix length";
      return std::nullopt;
    }
    r.prefix_ = prefix;
  }
  return r;
}

bool AddressRange::contains(const SocketAddress& a) const noexcept {
  const uint8_t* bytes = nullptr;
  if (a.family() == AF_INET && family_ == AF_INET) {
    // By offset, not by casting the sockaddr: 32-bit ARM aligns sockaddr_in more strictly.
    bytes = reinterpret_cast<const uint8_t*>(a.get()) + offsetof(sockaddr_in, sin_addr);
  } else if (a.family() == AF_INET6) {
    const auto* v6 = reinterpret_cast<const uint8_t*>(a.get()) + offsetof(sockaddr_in6, sin6_addr);
    static constexpr uint8_t kMapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xFF, 0xFF};
    if (family_ == AF_INET6)
      bytes = v6;
    else if (std::memcmp(v6, kMapped, 12) == 0)
      bytes = v6 + 12;  // an IPv4 peer on a dual-stack socket
  }
  if (bytes == nullptr) return false;
  const int full = prefix_ / 8;
  if (std::memcmp(bytes, bytes_, static_cast<size_t>(full)) != 0) return false;
  const int rest = prefix_ % 8;
  if (rest == 0) return true;
  const auto mask = static_cast<uint8_t>(0xFF << (8 - rest));
  return (bytes[full] & mask) == (bytes_[full] & mask);
}

std::string AddressRange::to_string() const {
  char buf[INET6_ADDRSTRLEN] = "?";
  inet_ntop(family_, bytes_, buf, sizeof buf);
  return std::string(buf) + "/" + std::to_string(prefix_);
}

}  // namespace mavswitch::transport
