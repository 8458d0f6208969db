// Endpoints changed while the router runs: one added or removed through the API, or what a
// reloaded configuration added, removed and changed (SIGHUP). Every other link stays as it is.
// Changes are made one at a time, on the blocking-work thread (asserted): they wait for the
// router, which neither its own threads nor the window's may do.
#pragma once

#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <string_view>

#include "config/config.hpp"
#include "router/router.hpp"
#include "window/websocket_doors.hpp"

namespace mavswitch::window {

class EndpointControl {
 public:
  // `read_config` reads the configuration again, as at start (throws ConfigError).
  EndpointControl(Router& router, std::function<config::Config()> read_config);

  // `served`: an HTTP server is configured to serve [WebSocketEndpoint]s (false: they are
  // refused, said). Before started_with().
  void serve_websockets(bool served);
  // An endpoint the router is to start with, as the router will number it (before start):
  // false when it cannot be served here (a WebSocket endpoint without the HTTP server; said).
  bool started_with(size_t index, config::EndpointConfig& e);
  const WebSocketDoors& websockets() const { return doors_; }

  // An HTTP-like answer: 200/201 done, 400 a bad request (nothing changed), 404, 409.
  struct Result {
    int status;
    std::string message;
  };
  // One endpoint section, as a config file holds it ("[UdpEndpoint name]" and its keys), or as
  // its parts (a JSON body's): the same checks either way.
  Result add(std::string_view section_text);
  Result add(const config::ConfigSection& section);
  Result remove(const std::string& name);
  // Reads the configuration again: endpoints whose sections are gone close, new ones open,
  // changed ones close and open again; the others are not touched. [General] changes need a
  // restart (said in the answer).
  Result reload();

 private:
  Result add_read(const std::function<void(config::Config&)>& read);
  struct Open {
    size_t index;
    std::string keys;  // as configured: a reload compares them
  };
  Result open(config::EndpointConfig e);
  // A made endpoint (kMade) gets its maker, by its section type's entry in makers_: a WebSocket
  // endpoint's door, a NATS endpoint's connection settings. Throws std::runtime_error.
  void prepare(config::EndpointConfig& e);
  Result close(const std::string& name);
  std::mutex mutex_;
  Router& router_;
  std::function<config::Config()> read_config_;
  std::map<std::string, Open> open_;  // by name, lower-cased
  // By section type (lower case): what makes its endpoints. Set at construction.
  std::map<std::string, std::function<void(config::EndpointConfig&)>> makers_;
  WebSocketDoors doors_;  // locks its own
};

}  // namespace mavswitch::window
