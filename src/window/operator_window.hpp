// The operator's window on a running daemon: the HTTP server with its API, and the reloads of
// the configuration on SIGHUP. What waits for the router (a reload, an endpoint the API opens
// or closes) runs on the blocking-work thread (base/blocking_work), never on the router's
// threads nor the window's. Made after the signal mask is set, started from the router's loop.
#pragma once

#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>

#include "window/endpoint_control.hpp"
#include "window/http_api.hpp"
#include "window/http_server.hpp"
#include "window/vehicle_watch.hpp"

namespace mavswitch::window {

class OperatorWindow {
 public:
  OperatorWindow(Router& router, config::HttpConfig http, std::function<config::Config()> read_config);
  ~OperatorWindow();

  EndpointControl& control() { return control_; }
  // Opens the HTTP server (one error line if it cannot: the router routes on without it).
  void start();
  // Any thread (the signal handler's): a reload soon. Requests that come while one waits to
  // start are that one.
  void request_reload();
  // Closes the HTTP server and waits for the jobs it gave the blocking-work thread: called as
  // soon as the router stops, before what its requests read (the log writers) goes away.
  void stop();
  // More of /metrics (the log writers'), in the exposition format; called on the router's thread.
  void add_metrics(std::function<std::string()> more) { more_metrics_ = std::move(more); }
  // Where the systems' HEARTBEATs are kept (the API's systems); it outlives stop(). Before start().
  void add_vehicles(const VehicleWatch* vehicles) { vehicles_ = vehicles; }
  void add_rates(const rates::MessageRates* rates) { rates_ = rates; }
  // The vehicles' messages, for mavlink2rest's API; it outlives stop(). Before start().
  void add_vehicle_data(vehicle::VehicleData* data, Program program) {
    data_ = data;
    program_ = std::move(program);
  }
  // The router's own components, named on the page and in /api/v1/systems. Before start().
  void add_own_component(uint8_t system, uint8_t component, std::string name) {
    own_components_[static_cast<uint16_t>(system << 8 | component)] = std::move(name);
  }

 private:
  void reload();  // the blocking-work thread
  // Runs `job` on the blocking-work thread, counted (stop() waits for it); not once stopping.
  void run_later(std::function<void()> job);
  Router& router_;
  config::HttpConfig http_;
  EndpointControl control_;
  std::function<std::string()> more_metrics_;
  const VehicleWatch* vehicles_ = nullptr;
  const rates::MessageRates* rates_ = nullptr;
  vehicle::VehicleData* data_ = nullptr;
  std::map<uint16_t, std::string> own_components_;
  Program program_;
  std::unique_ptr<HttpApi> api_;
  std::unique_ptr<HttpServer> server_;
  std::mutex mutex_;
  std::condition_variable settled_;
  bool reload_queued_ = false, quitting_ = false;  // under mutex_
  int jobs_ = 0;                                   // queued or running; under mutex_
};

}  // namespace mavswitch::window
