// The operator's window on a running daemon: the HTTP server with its API, and the thread
// that reloads the configuration on SIGHUP (a reload waits for the router, so it cannot run on
// the router's own thread). Made after the signal mask is set, started after the router.
#pragma once

#include <condition_variable>
#include <memory>
#include <mutex>
#include <thread>

#include "window/endpoint_control.hpp"
#include "window/http_api.hpp"
#include "window/http_server.hpp"
#include "window/vehicle_watch.hpp"

namespace mavswitch::daemon {

class OperatorWindow {
 public:
  OperatorWindow(Router& router, HttpConfig http, std::function<Config()> read_config);
  ~OperatorWindow();

  EndpointControl& control() { return control_; }
  // Opens the HTTP server (one error line if it cannot: the router routes on without it) and
  // the reload thread.
  void start();
  void request_reload();  // any thread; the signal handler's
  // Closes the HTTP server and ends the reload thread: called as soon as the router stops,
  // before what its requests read (the log writers) goes away.
  void stop();
  // More of /metrics (the log writers'), in the exposition format; called on an HTTP thread.
  void add_metrics(std::function<std::string()> more) { more_metrics_ = std::move(more); }
  // Where the systems' HEARTBEATs are kept (the API's systems); it outlives stop(). Before start().
  void add_vehicles(const VehicleWatch* vehicles) { vehicles_ = vehicles; }

 private:
  void reload_loop();
  Router& router_;
  HttpConfig http_;
  EndpointControl control_;
  std::function<std::string()> more_metrics_;
  const VehicleWatch* vehicles_ = nullptr;
  std::unique_ptr<HttpApi> api_;
  std::unique_ptr<HttpServer> server_;
  std::mutex mutex_;
  std::condition_variable wake_;
  bool reload_wanted_ = false, quitting_ = false;
  std::thread reloader_;
};

}  // namespace mavswitch::daemon
