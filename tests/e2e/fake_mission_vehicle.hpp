// An in-process vehicle that serves MAVLink's mission protocol (mission, fence and rally lists),
// losing a share of what it receives and of what it sends: the far end of a lossy hop. It
// re-asks for the item it expects when another comes or none came for kAskAgainMs, and says its
// ACK again to a late item, as autopilots do.
#pragma once

#include <array>
#include <map>
#include <mutex>
#include <optional>
#include <random>
#include <vector>

#include "library/component.hpp"
#include "services/mission_exchange.hpp"

namespace mavswitch::test {

class FakeMissionVehicle {
 public:
  static constexpr int64_t kAskAgainMs = 250;
  FakeMissionVehicle(Router& router, uint8_t system, uint8_t component, double loss, uint32_t seed = 1);
  ~FakeMissionVehicle();
  // The router's thread, or while no transfer runs.
  std::vector<services::MissionItem>& list(uint8_t type) { return lists_[type]; }
  uint64_t dropped() const { return dropped_; }
  // Item `seq` of every upload never reaches it (it asks for it again and again). Before a transfer.
  void lose_item(uint16_t seq) { lost_item_ = seq; }

 private:
  bool lost() { return loss_ > 0 && std::bernoulli_distribution(loss_)(random_); }
  template <class M>
  void send(const M& m) {
    if (lost()) {
      ++dropped_;
      return;
    }
    component_.send(m);
  }
  void request(uint8_t type);
  void ack(uint8_t type, uint8_t result);

  Router& router_;
  Component component_;
  transport::EventLoop::TimerId ask_again_ = 0;
  double loss_;
  std::mt19937 random_;
  uint64_t dropped_ = 0;
  std::optional<uint16_t> lost_item_;
  uint8_t gcs_system_ = 0, gcs_component_ = 0;
  std::array<std::vector<services::MissionItem>, 3> lists_;
  struct Upload {
    bool open = false;
    uint16_t count = 0;
    std::vector<services::MissionItem> got;
    int64_t asked_at = 0;
  };
  std::array<Upload, 3> uploads_;
  std::vector<Subscription> subscriptions_;
};

}  // namespace mavswitch::test
