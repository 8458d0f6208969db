#include "window/websocket_doors.hpp"

#include <stdexcept>

#include "config/config_keys.hpp"

namespace mavswitch::window {
namespace {

// [WebSocketEndpoint]s' maker: handoff endpoints (transport/handoff) whose links the window's
// thread opens through the entrance its path serves.
class WebSocketMaker final : public transport::EndpointMaker {
 public:
  WebSocketMaker(std::string path, std::shared_ptr<transport::HandoffEntrance> entrance)
      : path_(std::move(path)), entrance_(std::move(entrance)) {}
  const char* kind() const noexcept override { return "websocket"; }
  std::string where(const transport::EndpointSpec&) const override { return path_; }
  std::unique_ptr<transport::Endpoint> make(transport::EndpointSpec spec, transport::LinkHost& host) const override {
    return transport::make_handoff_endpoint(std::move(spec), host, entrance_);
  }

 private:
  const std::string path_;
  const std::shared_ptr<transport::HandoffEntrance> entrance_;
};

}  // namespace

void WebSocketDoors::enter(transport::EndpointSpec& spec, const std::string& path) {
  std::lock_guard lock(mutex_);
  if (const auto it = by_path_.find(path); it != by_path_.end())
    throw std::runtime_error("the WebSocket endpoint '" + it->second.name + "' serves " + path);
  auto entrance = std::make_shared<transport::HandoffEntrance>(spec.max_peers, spec.datagram_queue_frames);
  spec.maker = std::make_shared<WebSocketMaker>(path, entrance);
  by_path_[path] = {spec.name, std::move(entrance)};
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
