// The WebSocket endpoints' paths on the HTTP server: which entrance each path opens links
// through (transport/handoff). The endpoints themselves are the router's, opened and closed by
// EndpointControl; this is only where the window's thread finds them. Any thread (a lock held
// for a lookup, never while waiting for the router).
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "transport/endpoint.hpp"
#include "transport/handoff.hpp"

namespace mavswitch::window {

class WebSocketDoors {
 public:
  // Gives a [WebSocketEndpoint]'s spec its maker, whose endpoint's links come through `path`'s
  // entrance, and serves the path. Throws std::runtime_error when another endpoint serves it.
  void enter(transport::EndpointSpec& spec, const std::string& path);
  void leave(const std::string& name);  // no new client comes through its path
  std::shared_ptr<transport::HandoffEntrance> at(const std::string& path) const;  // null: none
  std::vector<std::pair<std::string, std::string>> paths() const;                 // (name, path)

 private:
  struct Door {
    std::string name;
    std::shared_ptr<transport::HandoffEntrance> entrance;
  };
  mutable std::mutex mutex_;
  std::map<std::string, Door> by_path_;  // under mutex_
};

}  // namespace mavswitch::window
