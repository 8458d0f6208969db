#include "window/websocket_doors.hpp"

#include <stdexcept>

#include "config/config_keys.hpp"

namespace mavswitch::window {

void WebSocketDoors::enter(transport::EndpointSpec& spec) {
  std::lock_guard lock(mutex_);
  if (const auto it = by_path_.find(spec.path); it != by_path_.end())
    throw std::runtime_error("the WebSocket endpoint '" + it->second.name + "' serves " + spec.path);
  spec.entrance = std::make_shared<transport::HandoffEntrance>(spec.max_peers, spec.datagram_queue_frames);
  by_path_[spec.path] = {spec.name, spec.entrance};
}

void WebSocketDoors::leave(const std::string& name) {
  std::lock_guard lock(mutex_);
  std::erase_if(by_path_,
                [&](const auto& door) { return config::keys::lower(door.second.name) == config::keys::lower(name); });
}

std::shared_ptr<transport::HandoffEntrance> WebSocketDoors::at(const std::string& path) const {
  std::lock_guard lock(mutex_);
  const auto it = by_path_.find(path);
  return it == by_path_.end() ? nullptr : it->second.entrance;
}

std::vector<std::pair<std::string, std::string>> WebSocketDoors::paths() const {
  std::lock_guard lock(mutex_);
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& [path, door] : by_path_) out.emplace_back(door.name, path);
  return out;
}

}  // namespace mavswitch::window
