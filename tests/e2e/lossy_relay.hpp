// A TCP hop that loses whole MAVLink frames: it listens on a loopback port, connects each client
// to `target`, and passes the frames of each direction on, dropping each with probability `loss`
// (frames found by their length fields, as the router's parser would). One thread; it stops and
// closes everything in its destructor.
#pragma once

#include <atomic>
#include <cstdint>
#include <thread>

namespace mavswitch::test {

class LossyRelay {
 public:
  LossyRelay(uint16_t target, double loss, uint32_t seed = 1);
  ~LossyRelay();
  uint16_t port() const noexcept { return port_; }
  uint64_t dropped() const noexcept { return dropped_.load(); }
  uint64_t passed() const noexcept { return passed_.load(); }

 private:
  void run();
  uint16_t target_;
  double loss_;
  uint32_t seed_;
  int listener_ = -1;
  uint16_t port_ = 0;
  std::atomic<bool> stop_{false};
  std::atomic<uint64_t> dropped_{0}, passed_{0};
  std::thread thread_;
};

}  // namespace mavswitch::test
