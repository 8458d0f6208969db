// Endpoints changed while the router runs: one added or removed through the API, or what a
// reloaded configuration added, removed and changed (SIGHUP). Every other link stays as it is.
// Changes are made one at a time (a lock), from threads outside the router: the HTTP server's
// and the reload thread.
#pragma once

#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <string_view>

#include "config/config.hpp"
#include "router/router.hpp"
#include "window/foreign_endpoints.hpp"

namespace mavswitch::daemon {

class EndpointControl {
 public:
  // `read_config` reads the configuration again, as at start (throws ConfigError).
  EndpointControl(Router& router, std::function<Config()> read_config)
      : router_(router), read_config_(std::move(read_config)), foreign_(router) {}

  // An endpoint the router was started with, as the router numbered it (before start).
  void started_with(size_t index, const EndpointConfig& e);
  // Opens the WebSocket and NATS endpoints the router starts with (their errors said, the
  // router routes on without them). `websockets_served`: an HTTP server is configured.
  void start_foreign(Config& config, bool websockets_served);
  ForeignEndpoints& foreign() { return foreign_; }

  // An HTTP-like answer: 200/201 done, 400 a bad request (nothing changed), 404, 409.
  struct Result {
    int status;
    std::string message;
  };
  // One endpoint section, as a config file holds it ("[UdpEndpoint name]" and its keys), or as
  // its parts (a JSON body's): the same checks either way.
  Result add(std::string_view section_text);
  Result add(const ConfigSection& section);
  Result remove(const std::string& name);
  // Reads the configuration again: endpoints whose sections are gone close, new ones open,
  // changed ones close and open again; the others are not touched. [General] changes need a
  // restart (said in the answer).
  Result reload();

 private:
  Result add_read(const std::function<void(Config&)>& read);
  struct Open {
    size_t index;
    std::string keys;  // as configured: a reload compares them
  };
  Result open(EndpointConfig e);
  Result close(const std::string& name);
  std::mutex mutex_;
  Router& router_;
  std::function<Config()> read_config_;
  std::map<std::string, Open> open_;  // by name, lower-cased
  bool websockets_served_ = false;
  ForeignEndpoints foreign_;  // locks its own
};

}  // namespace mavswitch::daemon
