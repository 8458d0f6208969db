#include "window/page_policy.hpp"

namespace mavswitch::window {

std::string page_policy(const std::string& map_tiles) {
  const std::string policy = "default-src 'self'";
  if (map_tiles.empty()) return policy;
  const size_t host = map_tiles.find("://") + 3;
  std::string origin = map_tiles.substr(0, map_tiles.find('/', host));
  for (size_t open = origin.find('{'); open != std::string::npos; open = origin.find('{'))
    origin.replace(open, origin.find('}', open) - open + 1, "*");
  return policy + "; img-src 'self' " + origin;
}

}  // namespace mavswitch::window
