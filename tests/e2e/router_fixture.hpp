// A Router running on its own thread for a test, with a way to look at it safely.
#pragma once

#include <cstdlib>
#include <future>
#include <thread>

#include "e2e/peers.hpp"
#include "router/router.hpp"

namespace mavswitch::test {

class RouterThread {
 public:
  explicit RouterThread(RouterOptions options = {}) : router(with_test_workers(options)) {}
  // A test whose behaviour depends on the worker count: exactly the workers `options` asks for.
  struct Exactly {};
  RouterThread(RouterOptions options, Exactly) : router(options) {}
  ~RouterThread() { stop(); }

  // The common case: one UDP server endpoint on a free port; returns the port.
  uint16_t start_with_udp_server();
  size_t udp_server = 0;  // its endpoint index (components made before it come first)

  void start() {
    router.start();
    thread_ = std::thread([this] { router.run(); });
    router.wait_until_running();
  }
  void stop() {
    if (!thread_.joinable()) return;
    router.stop();
    thread_.join();
  }
  // Runs f on the router's thread and returns its result: state is read without a race.
  template <class F>
  auto on_loop(F f) {
    std::promise<decltype(f())> done;
    auto result = done.get_future();
    router.event_loop().post([&] { done.set_value(f()); });
    return result.get();
  }
  size_t link_count(size_t endpoint_index) {
    size_t n = 0;
    router.for_each_link(endpoint_index, [&](const Router::LinkReport&) { ++n; });
    return n;
  }
  transport::LinkCounters link_counters(size_t endpoint_index) {
    transport::LinkCounters c;
    router.for_each_link(endpoint_index, [&](const Router::LinkReport& r) { c = r.counters; });
    return c;
  }
  // A router test runs with the default one I/O worker, or with the number in
  // MAVSWITCH_TEST_WORKERS (the ThreadSanitizer pass sets 3, so that links of one test land on
  // different workers and frames cross between them), unless it asks for a number itself.
  static RouterOptions with_test_workers(RouterOptions options) {
    if (options.workers == 1) {
      if (const char* w = std::getenv("MAVSWITCH_TEST_WORKERS")) options.workers = static_cast<unsigned>(std::atoi(w));
    }
    return options;
  }

  Router router;

 private:
  std::thread thread_;
};

inline transport::EndpointSpec endpoint(transport::EndpointSpec::Kind kind, uint16_t port, const char* name) {
  transport::EndpointSpec s;
  s.kind = kind;
  s.name = name;
  s.address = "127.0.0.1";
  s.port = port;
  return s;
}
inline transport::EndpointSpec udp_server(uint16_t port) {
  return endpoint(transport::EndpointSpec::Kind::kUdpServer, port, "udp-server");
}
inline transport::EndpointSpec udp_client(uint16_t port) {
  return endpoint(transport::EndpointSpec::Kind::kUdpClient, port, "udp-client");
}
inline transport::EndpointSpec tcp_server(uint16_t port) {
  return endpoint(transport::EndpointSpec::Kind::kTcpServer, port, "tcp-server");
}
inline transport::EndpointSpec tcp_client(uint16_t port) {
  return endpoint(transport::EndpointSpec::Kind::kTcpClient, port, "tcp-client");
}
inline transport::EndpointSpec serial(const std::string& device) {
  transport::EndpointSpec s = endpoint(transport::EndpointSpec::Kind::kSerial, 0, "serial");
  s.device = device;
  return s;
}

inline uint16_t RouterThread::start_with_udp_server() {
  const uint16_t port = free_udp_port();
  udp_server = router.endpoint_count();
  router.add_endpoint(test::udp_server(port));
  start();
  return port;
}

}  // namespace mavswitch::test
