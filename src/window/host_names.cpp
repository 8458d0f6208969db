#include "window/host_names.hpp"

#include <arpa/inet.h>

#include <algorithm>
#include <cctype>

namespace mavswitch::window {
namespace {

bool is_port(std::string_view text) {
  return !text.empty() && text.size() <= 5 &&
         std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; });
}

}  // namespace

bool HostNames::allows(std::string_view host) const {
  if (host.empty()) return true;
  std::string name;
  if (host.front() == '[') {  // [v6]:port
    const size_t close = host.find(']');
    if (close == std::string_view::npos) return false;
    const std::string_view rest = host.substr(close + 1);
    if (!rest.empty() && (rest.front() != ':' || !is_port(rest.substr(1)))) return false;
    const std::string v6(host.substr(1, close - 1));
    in6_addr a6{};
    return inet_pton(AF_INET6, v6.c_str(), &a6) == 1;
  }
  const size_t colon = host.find(':');
  if (colon != std::string_view::npos && !is_port(host.substr(colon + 1))) return false;
  for (const char c : host.substr(0, colon)) name += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (!name.empty() && name.back() == '.') name.pop_back();  // "localhost." is localhost
  in_addr a4{};
  if (inet_pton(AF_INET, name.c_str(), &a4) == 1) return true;
  if (name == "localhost" || name.ends_with(".localhost")) return true;  // RFC 6761: always loopback
  return std::find(configured_.begin(), configured_.end(), name) != configured_.end();
}

}  // namespace mavswitch::window
