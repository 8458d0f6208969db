// An exchange (library/transactions.hpp) driven by hand, as the transaction engine drives it, on
// a router with no links: the router's component sends each request, the vehicle's component
// (in the same router) hears it, and the test answers as a vehicle would. The services' tests
// run here, not only against SITL, so that the sanitizer pass sees every request they make.
#pragma once

#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <thread>
#include <vector>

#include "library/component.hpp"
#include "library/transactions.hpp"
#include "mavswitch/msg/heartbeat.hpp"
#include "protocol/parser.hpp"
#include "router/router.hpp"

namespace mavswitch::test {

class ExchangeTest : public ::testing::Test {
 protected:
  static constexpr uint8_t kOwnSystem = 255, kOwnComponent = 190, kVehicle = 1;

  void SetUp() override {
    router_.start();
    thread_ = std::thread([this] { router_.run(); });
    router_.wait_until_running();
    own_ = std::make_unique<Component>(router_, kOwnSystem, kOwnComponent);
    vehicle_ = std::make_unique<Component>(router_, kVehicle, kVehicle);
    heard_ = vehicle_->subscribe({}, [this](const protocol::FrameView& f) {
      asked_[f.msgid()].assign(f.payload().begin(), f.payload().end());
      ++requests_[f.msgid()];
    });
    ASSERT_TRUE(vehicle_->send(msg::Heartbeat{}));  // the route to the vehicle, for the requests
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    bool known = false;
    while (!known && std::chrono::steady_clock::now() < deadline) {
      router_.run_on_loop([&] { known = router_.routing().routes().knows(kVehicle, kVehicle); });
      if (!known) std::this_thread::yield();
    }
    ASSERT_TRUE(known) << "the vehicle's heartbeat was never routed";
  }
  void TearDown() override {
    heard_.reset();
    vehicle_.reset();
    own_.reset();
    router_.stop();
    thread_.join();
  }

  // The last M the vehicle heard (all zero when none came).
  template <class M>
  M asked() const {
    const auto it = asked_.find(M::kId);
    return it == asked_.end() ? M{} : M::decode(it->second);
  }
  template <class M>
  int requests() const {
    const auto it = requests_.find(M::kId);
    return it == requests_.end() ? 0 : it->second;
  }

  // The vehicle says `m` (to the router's component, when M names a target): what it means to `e`.
  template <class M>
  Exchange::Step say(Exchange& e, M m) {
    if constexpr (requires { m.target_system; }) m.target_system = kOwnSystem, m.target_component = kOwnComponent;
    uint8_t bytes[protocol::kMaxFrameLen];
    const size_t n = dialect::typed::encode_frame(m, {.sysid = kVehicle, .compid = kVehicle}, bytes);
    return e.heard(protocol::view_checked(router_.routing_table(), {bytes, n}), *own_);
  }

  // Runs `f` on the router's thread, where exchanges live.
  template <class F>
  void on_router(F f) {
    router_.run_on_loop(f);
  }

  Router router_;
  std::thread thread_;
  std::unique_ptr<Component> own_, vehicle_;
  Subscription heard_;
  std::map<uint32_t, std::vector<uint8_t>> asked_;  // the router's thread: the last payload of each message
  std::map<uint32_t, int> requests_;
};

}  // namespace mavswitch::test
